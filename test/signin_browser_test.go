package test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/oauth2-proxy/mockoidc"

	"threadflow/testkit/botproc"
)

// gatedFor is a workflow whose only gate may be approved by approver alone.
func gatedFor(name, approver string) string {
	return `name: ` + name + `
description: Asks ` + approver + ` to approve.
nodes:
  - id: ask
    approval:
      message: Release ` + name + `?
      approvers: ["` + approver + `"]
  - id: done
    depends_on: [ask]
    bash: echo "released ` + name + `"
`
}

// Issue 29: a person signs in to the dashboard through an OpenID Connect provider (a real one, on
// loopback) and acts there as their Slack id: they approve a gate listing slack:U1, are refused on
// one listing someone else, and are never offered a name to pick.
func TestBrowserSignedInPersonApprovesAsTheirPlatformID(t *testing.T) {
	ctx := browser(t)
	op, err := mockoidc.Run()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = op.Shutdown() })
	op.QueueUser(&mockoidc.MockUser{Subject: "U1", PreferredUsername: "alice"})

	env := botproc.Env(t)
	wf := t.TempDir()
	for name, approver := range map[string]string{"release-a": "slack:U1", "release-b": "slack:U2"} {
		if err := os.WriteFile(filepath.Join(wf, name+".yaml"), []byte(gatedFor(name, approver)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	addr := loopbackAddr(t) // the provider must know where to send the browser back before the bot starts
	cfg := op.Config()
	for k, v := range map[string]string{"WORKFLOWS_DIR": wf, "HTTP_ADDR": addr, "DASHBOARD_URL": "http://" + addr,
		"SESSION_SECRET": strings.Repeat("0123456789abcdef", 4), "OIDC_ISSUER": cfg.Issuer, "OIDC_CLIENT_ID": cfg.ClientID,
		"OIDC_CLIENT_SECRET": cfg.ClientSecret, "OIDC_ID_PLATFORM": "slack"} {
		env[k] = v
	}
	p := botproc.Start(t, env)
	base := p.URL()

	// Without a session the chat page sends the browser to sign in; the provider signs it in as U1,
	// and the browser is back on the page it asked for.
	act(t, ctx, "sign in through the OIDC provider",
		chromedp.Navigate(base+"chat"),
		chromedp.WaitVisible(chromedp.CSS("#signin-oidc")),
		chromedp.Click(chromedp.CSS("#signin-oidc")),
		chromedp.WaitVisible(`//code[@id="signed-in-as" and contains(., "slack:U1")]`),
	)
	if landed := value(t, ctx, "where the browser landed", chromedp.Location()); landed != base+"chat" {
		t.Errorf("after signing in the browser is at %s, want the chat page it asked for (%schat)", landed, base)
	}
	if n := value(t, ctx, "count name forms", chromedp.Evaluate[int](`document.querySelectorAll('form[action="/chat/name"]').length`)); n != 0 {
		t.Errorf("a signed-in person is offered %d forms to pick a name", n)
	}

	// The gate listing slack:U1: the page offers Approve, and approving completes the run.
	runA := startGated(t, ctx, base, "release-a")
	act(t, ctx, "approve the gate that lists slack:U1",
		chromedp.Navigate(base+"runs/"+runA),
		chromedp.WaitVisible(chromedp.CSS("#btn-approve")),
		typeLive("#gate-note", "signed in"),
		clickLive("#btn-approve"),
		chromedp.WaitVisible(chromedp.CSS("#run-state.state-completed")),
	)
	if page := value(t, ctx, "read the approved run", chromedp.Text(chromedp.CSS("main"))); !strings.Contains(page, "approve by") || !strings.Contains(page, "slack:U1") {
		t.Errorf("the run page does not say slack:U1 approved:\n%s", page)
	}

	// The gate listing slack:U2: no Approve button, and an approval sent anyway is refused.
	runB := startGated(t, ctx, base, "release-b")
	act(t, ctx, "open the gate that lists slack:U2",
		chromedp.Navigate(base+"runs/"+runB),
		chromedp.WaitVisible(chromedp.CSS("#run-state.state-paused")),
	)
	act(t, ctx, "read who may answer",
		chromedp.WaitVisible(`//p[@id="gate-offer" and contains(., "slack:U1")]`),
	)
	if n := value(t, ctx, "count approve buttons", chromedp.Evaluate[int](`document.querySelectorAll("#btn-approve").length`)); n != 0 {
		t.Error("the page offers Approve on a gate that does not list the signed-in person")
	}
	act(t, ctx, "send an approval anyway and read the refusal",
		chromedp.Evaluate[chromedp.Void](`fetch("/runs/`+runB+`/approve", {method: "POST"})`),
		chromedp.Navigate(base+"chat"),
		chromedp.WaitVisible(`//div[@id="chat-log"]//div[contains(@class,"msg-body") and contains(., "slack:U2")]`),
		chromedp.Navigate(base+"runs/"+runB),
		chromedp.WaitVisible(chromedp.CSS("#run-state.state-paused")),
	)

	// The audit page says who started, approved and was refused, and that they were signed in.
	act(t, ctx, "read the audit page",
		chromedp.Navigate(base+"audit"),
		chromedp.WaitVisible(`//table[@id="audit"]//tr[contains(@class,"audit-approved") and contains(., "slack:U1") and .//span[.="signed-in"] and contains(., "signed in")]`),
		chromedp.WaitVisible(`//table[@id="audit"]//tr[contains(@class,"audit-refused") and contains(., "slack:U1") and .//span[.="signed-in"]]`),
		chromedp.WaitVisible(`//table[@id="audit"]//tr[contains(@class,"audit-started") and contains(., "`+runB+`") and .//span[.="signed-in"]]`),
	)
}

// startGated starts workflow from the signed-in chat page and returns the new run's id.
func startGated(t *testing.T, ctx context.Context, base, workflow string) string {
	t.Helper()
	act(t, ctx, "start "+workflow,
		chromedp.Navigate(base+"chat"),
		chromedp.WaitVisible(chromedp.CSS("#chat-text")),
		chromedp.SendKeys(chromedp.CSS("#chat-text"), "/workflow run "+workflow),
		chromedp.Click(chromedp.CSS("#chat-send")),
		chromedp.Navigate(base+"?workflow="+workflow+"&state=paused"),
		chromedp.WaitVisible(chromedp.CSS("table.runs tbody a")),
	)
	href := value(t, ctx, "read the run's link", chromedp.AttributeValue(chromedp.CSS("table.runs tbody a"), "href"))
	return strings.TrimPrefix(href.Value, "/runs/")
}

// loopbackAddr is a free loopback host:port, for a bot whose address must be known before it starts.
func loopbackAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().String()
}
