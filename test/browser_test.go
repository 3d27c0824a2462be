package test

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"threadflow/testkit/botproc"

	"github.com/chromedp/chromedp"
)

// shipWorkflow builds (waiting until the test lets it finish, so the run page can be watched
// changing), asks for approval, then deploys.
const shipWorkflow = `name: ship
description: Builds a version, asks for approval, deploys it.
nodes:
  - id: build
    bash: |
      echo "compiling $ARGUMENTS"
      while [ ! -f "$HOME/let-$ARGUMENTS-finish" ]; do sleep 0.05; done
      echo "built $ARGUMENTS"
  - id: approve-release
    depends_on: [build]
    approval:
      message: Ship this build to production?
      approvers: ["web:local", "web:release-manager", "@admins"]
      timeout: 24h
      remind_after: 4h
  - id: deploy
    depends_on: [approve-release]
    bash: echo "deployed $ARGUMENTS"
  - id: hotfix-notice
    depends_on: [approve-release]
    when: "$ARGUMENTS == 'hotfix'"
    bash: echo "hotfix shipped"
`

func TestBrowserRunsAGatedWorkflowFromTheChatPage(t *testing.T) {
	ctx := browser(t)
	const token = "browser-test-token"
	env := botproc.Env(t)
	wf := t.TempDir()
	if err := os.WriteFile(filepath.Join(wf, "ship.yaml"), []byte(shipWorkflow), 0o644); err != nil {
		t.Fatal(err)
	}
	env["WORKFLOWS_DIR"] = wf
	env["DASHBOARD_TOKEN"] = token
	p := botproc.Start(t, env)
	base := p.URL()

	// A newcomer opens the chat page (the token link signs the browser in) and starts a run.
	act(t, ctx, "type the run command on the chat page",
		chromedp.Navigate(base+"chat?token="+token),
		chromedp.WaitVisible(chromedp.CSS("#chat-text")),
		chromedp.SendKeys(chromedp.CSS("#chat-text"), "/workflow run ship v2.0"),
		chromedp.Click(chromedp.CSS("#chat-send")),
		chromedp.WaitVisible(`//div[contains(@class,"msg") and not(contains(@class,"mine")) and contains(., "ship")]`),
	)
	if chatLog := value(t, ctx, "read the chat log", chromedp.Text(chromedp.CSS("#chat-log"))); !strings.Contains(chatLog, "/workflow run ship v2.0") {
		t.Errorf("chat log does not show what was typed:\n%s", chatLog)
	}

	// The runs list shows the run (live); its page says it is running while the build waits.
	act(t, ctx, "find the run on the runs list",
		chromedp.Navigate(base),
		chromedp.WaitVisible(chromedp.CSS("table.runs tbody a")),
	)
	href := value(t, ctx, "read the run's link", chromedp.AttributeValue(chromedp.CSS("table.runs tbody a"), "href"))
	act(t, ctx, "open the run page",
		chromedp.Navigate(base+strings.TrimPrefix(href.Value, "/")),
		chromedp.WaitVisible(chromedp.CSS("#run-state.state-running")),
	)
	value(t, ctx, "mark the page", chromedp.Evaluate[bool](`window.notReloaded = true`))

	// While it builds, the page draws the workflow with the running node, its live output, the
	// nodes still to come with what they wait for, and a Cancel button.
	act(t, ctx, "see the graph and the running node's live output",
		chromedp.WaitVisible(chromedp.CSS("#graph #gnode-build.gnode-running")),
		chromedp.WaitVisible(`//pre[@id="live-build" and contains(., "compiling v2.0")]`),
		chromedp.WaitVisible(`//p[@id="reason-deploy" and contains(., "waits for approve-release")]`),
		chromedp.WaitVisible(chromedp.CSS("#btn-cancel")),
	)
	screenshot(t, ctx, "dashboard-run-live.png")

	// The build finishes: the page changes to paused by itself (no reload) and shows the gate.
	letFinish(t, env, "v2.0")
	act(t, ctx, "watch the run page change to paused live",
		chromedp.WaitVisible(chromedp.CSS("#run-state.state-paused")),
		chromedp.WaitVisible(chromedp.CSS("#btn-approve")),
	)
	if !value(t, ctx, "check the page was not reloaded", chromedp.Evaluate[bool](`window.notReloaded === true`)) {
		t.Error("the run page was reloaded; want a live update")
	}
	page := value(t, ctx, "read the paused run page", chromedp.Text(chromedp.CSS("main")))
	for _, want := range []string{"Ship this build to production?", "built v2.0", "who may answer: web:local, web:release-manager and the admins",
		"Times out ", "then the gate is rejected", "Reminder "} {
		if !strings.Contains(page, want) {
			t.Errorf("paused run page lacks %q:\n%s", want, page)
		}
	}
	screenshot(t, ctx, "dashboard-run.png")

	// Approve with a note: the run completes and the page says who approved it, and with what note.
	act(t, ctx, "approve with a note and see the run complete",
		typeLive("#gate-note", "release notes <checked>"),
		clickLive("#btn-approve"),
		chromedp.WaitVisible(chromedp.CSS("#run-state.state-completed")),
		chromedp.WaitVisible(`//pre[contains(., "deployed v2.0")]`),
	)
	page = value(t, ctx, "read the completed run page", chromedp.Text(chromedp.CSS("main")))
	if !strings.Contains(page, "approve by web:local") || !strings.Contains(page, "release notes <checked>") {
		t.Errorf("completed run page does not say who approved, with the note:\n%s", page)
	}
	act(t, ctx, "see the skipped node with its reason",
		chromedp.WaitVisible(chromedp.CSS("#graph #gnode-hotfix-notice.gnode-skipped")),
		chromedp.WaitVisible(`//p[@id="reason-hotfix-notice" and contains(., "is false")]`),
	)
	screenshot(t, ctx, "dashboard-run-done.png")

	// A second run is cancelled from its page while it builds.
	act(t, ctx, "start a second run", append(runInChat(base, "v3.0"),
		chromedp.Navigate(base+"?state=running"),
		chromedp.WaitVisible(chromedp.CSS("table.runs tbody a")),
	)...)
	href = value(t, ctx, "read the second run's link", chromedp.AttributeValue(chromedp.CSS("table.runs tbody a"), "href"))
	act(t, ctx, "cancel the second run from its page while it builds",
		chromedp.Navigate(base+strings.TrimPrefix(href.Value, "/")),
		chromedp.WaitVisible(`//pre[@id="live-build" and contains(., "compiling v3.0")]`),
		clickLive("#btn-cancel"),
		chromedp.WaitVisible(chromedp.CSS("#run-state.state-cancelled")),
	)
	// The build it stopped is cancelled, with what it printed; the nodes after it never ran.
	act(t, ctx, "see the cancelled build and the nodes that did not run",
		chromedp.Navigate(base+strings.TrimPrefix(href.Value, "/")),
		chromedp.WaitVisible(chromedp.CSS("#graph #gnode-build.gnode-cancelled")),
		chromedp.WaitVisible(`//p[@id="reason-build" and starts-with(., "cancelled by ")]`),
		chromedp.WaitVisible(`//pre[@id="partial-build" and contains(., "compiling v3.0")]`),
		chromedp.WaitVisible(chromedp.CSS("#graph #gnode-deploy.gnode-not_run")),
		chromedp.WaitVisible(`//p[@id="reason-deploy" and contains(., "not run: the run was cancelled")]`),
	)
	if page := value(t, ctx, "read the cancelled run page", chromedp.Text(chromedp.CSS("main"))); strings.Contains(page, "live output") {
		t.Errorf("the cancelled run page still shows live output:\n%s", page)
	}
	screenshot(t, ctx, "dashboard-run-cancelled.png")
	act(t, ctx, "see the completed run on the runs list",
		chromedp.Navigate(base),
		chromedp.WaitVisible(chromedp.CSS("table.runs .state-completed")),
		chromedp.WaitVisible(`//ul[@id="state-counts"]//span[contains(., "completed 1")]`),
		chromedp.WaitVisible(`//ul[@id="state-counts"]//span[contains(., "cancelled 1")]`),
	)
	screenshot(t, ctx, "dashboard-runs.png")

	// A third run is answered in words in its thread, which the chat page links to.
	letFinish(t, env, "v4.0")
	act(t, ctx, "start a third run and open its thread from the chat page", append(runInChat(base, "v4.0"),
		chromedp.WaitVisible(`//div[@id="thread-list"]//li[3]`), // the newest of three, listed first
		clickLive(`#thread-list li:first-child a`),
		chromedp.WaitVisible(`//div[@id="chat-log"]//div[contains(@class,"msg-body") and contains(., "is waiting at approve-release")]`),
	)...)
	act(t, ctx, "approve in plain words in the thread and see the run complete there",
		chromedp.SendKeys(chromedp.CSS("#chat-text"), "lgtm, ship it"),
		chromedp.Click(chromedp.CSS("#chat-send")),
		chromedp.WaitVisible(`//div[@id="chat-log"]//div[contains(@class,"msg-body") and contains(., "✅ Approved by web:local") and contains(., "with note: ship it")]`),
		chromedp.WaitVisible(`//div[@id="chat-log"]//div[contains(@class,"msg-body") and contains(., "of ship completed") and contains(., "deployed v4.0")]`),
	)
	page = value(t, ctx, "read the run's thread", chromedp.Text(chromedp.CSS("#chat-log")))
	if !strings.Contains(page, "lgtm, ship it") {
		t.Errorf("the run's thread does not show the reply typed in it:\n%s", page)
	}

	// A fourth run is rejected at its gate on the dashboard, with a reason: the gate shows rejected,
	// by whom and why, and the nodes after it did not run.
	letFinish(t, env, "v5.0")
	act(t, ctx, "start a fourth run", append(runInChat(base, "v5.0"),
		chromedp.WaitVisible(`//div[@id="thread-list"]//li[4]`), // started before the page is left
		chromedp.Navigate(base+"?state=paused"),
		chromedp.WaitVisible(chromedp.CSS("table.runs tbody a")),
	)...)
	href = value(t, ctx, "read the fourth run's link", chromedp.AttributeValue(chromedp.CSS("table.runs tbody a"), "href"))
	act(t, ctx, "reject the fourth run's gate with a reason",
		chromedp.Navigate(base+strings.TrimPrefix(href.Value, "/")),
		chromedp.WaitVisible(chromedp.CSS("#btn-reject")),
		typeLive("#gate-note", "the changelog is missing"),
		clickLive("#btn-reject"),
		chromedp.WaitVisible(chromedp.CSS("#run-state.state-cancelled")),
	)
	act(t, ctx, "see the rejected gate and the nodes that did not run",
		chromedp.Navigate(base+strings.TrimPrefix(href.Value, "/")),
		chromedp.WaitVisible(chromedp.CSS("#graph #gnode-approve-release.gnode-rejected")),
		chromedp.WaitVisible(`//li[contains(@class, "node-rejected")]//div[@class="gate" and contains(., "reject by web:local") and contains(., "the changelog is missing")]`),
		chromedp.WaitVisible(chromedp.CSS("#graph #gnode-deploy.gnode-not_run")),
		chromedp.WaitVisible(`//p[@id="reason-deploy" and contains(., "not run: approve-release was rejected")]`),
	)
	if n := value(t, ctx, "count waiting nodes", chromedp.Evaluate[int](`document.querySelectorAll(".gnode-waiting, .node-waiting").length`)); n != 0 {
		t.Errorf("the rejected run page still draws %d nodes waiting", n)
	}
	screenshot(t, ctx, "dashboard-run-rejected.png")
}

// clickLive clicks the element sel finds at the moment of the click. A page that updates live
// replaces its content as the run moves, so a node found by one step may be gone by the next: a
// click by node id then fails ("Could not find node"). The page's own script finds and clicks the
// element in one task, so no update can come in between.
func clickLive(sel string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](`(() => { const el = document.querySelector(` + strconv.Quote(sel) + `); if (!el) throw new Error("no element " + ` + strconv.Quote(sel) + `); el.click(); })()`)
}

// letFinish lets the ship run of version finish its build (the test workflow waits for this file).
func letFinish(t *testing.T, env map[string]string, version string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(env["HOME"], "let-"+version+"-finish"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// runInChat are the steps that start a ship run of version from the chat page at base.
func runInChat(base, version string) []chromedp.Action[chromedp.Void] {
	return []chromedp.Action[chromedp.Void]{
		chromedp.Navigate(base + "chat"),
		chromedp.WaitVisible(chromedp.CSS("#chat-text")),
		chromedp.SendKeys(chromedp.CSS("#chat-text"), "/workflow run ship "+version),
		chromedp.Click(chromedp.CSS("#chat-send")),
	}
}

// typeLive types text into a field of a live-updating part of the page, in the page's own task: a
// chromedp.SendKeys resolves the field's node first, and a live update replacing the field between
// that and the typing fails the step ("Could not find node"). The page keeps a typed note across
// updates (app.js), so what is typed here is what the form sends.
func typeLive(sel, text string) chromedp.Action[chromedp.Void] {
	return chromedp.Evaluate[chromedp.Void](`(() => { const el = document.querySelector(` + strconv.Quote(sel) + `); if (!el) throw new Error("no element " + ` + strconv.Quote(sel) + `); el.focus(); el.value = ` + strconv.Quote(text) + `; el.dispatchEvent(new Event("input", {bubbles: true})); })()`)
}

// act performs browser steps, failing the test with what was being done.
func act(t *testing.T, ctx context.Context, what string, steps ...chromedp.Action[chromedp.Void]) {
	t.Helper()
	ctx, cancel := step(ctx)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// value runs one browser action and returns its result, failing the test with what was being done.
func value[T any](t *testing.T, ctx context.Context, what string, a chromedp.Action[T]) T {
	t.Helper()
	ctx, cancel := step(ctx)
	defer cancel()
	v, err := chromedp.Run(ctx, a)
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	return v
}
