package test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"threadflow/adapters/hooks"
	"threadflow/db"
	"threadflow/testkit/botproc"
)

const (
	deploySecret = "s3cr3t-deploy-hook-value"
	githubSecret = "gh-webhook-secret-value"
)

// triggerWorkflows post into the Slack fake's channel. deploy pauses at a gate its requester (the
// trigger) may not answer; triage prints what the GitHub delivery gave its args and its file.
var triggerWorkflows = map[string]string{
	"deploy.yaml": `name: deploy
description: Deploys the pushed ref once someone agrees.
triggers:
  - webhook: {name: deploy, secret_env: DEPLOY_HOOK_SECRET, post_to: "slack:` + channel + `", args: "${{ payload.ref }}"}
nodes:
  - id: check
    bash: |
      printf 'checking %s; payload file has %s bytes; secret [%s]\n' "$ARGUMENTS" "$(wc -c < "$TRIGGER_PAYLOAD_FILE" | tr -d ' ')" "$DEPLOY_HOOK_SECRET"
  - id: confirm
    depends_on: [check]
    approval:
      message: Deploy $ARGUMENTS?
      allow_self_approval: false
  - id: ship
    depends_on: [confirm]
    bash: echo "deployed $ARGUMENTS"
`,
	"triage.yaml": `name: triage
description: Labels an issue.
triggers:
  - github:
      name: triage
      events: [issues.labeled]
      secret_env: GITHUB_HOOK_SECRET
      post_to: "slack:` + channel + `"
      args: {label: "${{ payload.label.name }}", issue: "${{ payload.issue.number }}", event: "${{ event }}"}
nodes:
  - id: look
    bash: |
      printf 'args [%s] sender [%s]\n' "$ARGUMENTS" "$(grep -o '"login": *"[^"]*"' "$TRIGGER_PAYLOAD_FILE")"
`,
}

// startTriggerBot is a Slack bot with the trigger workflows and extra settings.
func startTriggerBot(t *testing.T, env map[string]string, extra map[string]string) *slackBot {
	t.Helper()
	settings := map[string]string{"WORKFLOWS_DIR": workflowDir(t, triggerWorkflows)}
	for k, v := range extra {
		settings[k] = v
	}
	s := startSlackBot(t, env, settings)
	s.bot.WaitUp()
	return s
}

// post sends body to /hooks/<path> with headers and returns the status and response body.
func post(t *testing.T, s *slackBot, path string, body []byte, headers map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, strings.TrimSuffix(s.bot.URL(), "/")+"/hooks/"+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = resp.Body.Close() }()
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, string(out)
}

// signed are the headers of a Threadflow webhook delivery of body sent at `at`.
func signed(secret string, at time.Time, body []byte, delivery string) map[string]string {
	ts := strconv.FormatInt(at.Unix(), 10)
	h := map[string]string{hooks.HeaderTimestamp: ts,
		hooks.HeaderSignature: "sha256=" + hex.EncodeToString(hooks.Sign(secret, []byte(ts+"."), body))}
	if delivery != "" {
		h[hooks.HeaderDelivery] = delivery
	}
	return h
}

// nothingWritten checks that the trigger has no fire and its workflow no run.
func nothingWritten(t *testing.T, st db.Store, trigger, workflowName string) {
	t.Helper()
	fires, err := st.TriggerFires(t.Context(), trigger, 0)
	if err != nil || len(fires) != 0 {
		t.Errorf("fires of %s = %v, %v; want none", trigger, fires, err)
	}
	runs, err := st.ListRuns(t.Context(), db.RunFilter{Workflow: workflowName})
	if err != nil || len(runs) != 0 {
		t.Errorf("runs of %s = %d, %v; want none", workflowName, len(runs), err)
	}
}

// TestWebhookTrigger: deliveries refused for a wrong signature, an old timestamp and a 2 MiB body
// write nothing; a signed delivery starts one run that talks in the Slack channel and pauses at a
// gate that anyone allowed answers by reply (its requester is the trigger); the same delivery
// again starts nothing. The payload reaches the node only as a file; the secret not at all.
func TestWebhookTrigger(t *testing.T) {
	t.Parallel()
	botproc.ForEachEngine(t, botproc.Env, func(t *testing.T, env map[string]string) {
		s := startTriggerBot(t, env, map[string]string{"DEPLOY_HOOK_SECRET": deploySecret})
		st := openStore(t, env)
		body := []byte(`{"ref":"v1.4.2","note":"$(touch /tmp/pwned) ; rm -rf"}`)
		refused := []struct {
			name    string
			status  int
			body    []byte
			headers map[string]string
		}{
			{"wrong signature", http.StatusUnauthorized, body, signed("not-the-secret", time.Now(), body, "d-0")},
			{"no signature", http.StatusUnauthorized, body, map[string]string{hooks.HeaderTimestamp: strconv.FormatInt(time.Now().Unix(), 10)}},
			{"old timestamp", http.StatusUnauthorized, body, signed(deploySecret, time.Now().Add(-6*time.Minute), body, "d-0")},
			{"2 MiB body", http.StatusRequestEntityTooLarge, make([]byte, 2<<20), signed(deploySecret, time.Now(), make([]byte, 2<<20), "d-0")},
			{"unknown trigger", http.StatusNotFound, body, signed(deploySecret, time.Now(), body, "d-0")},
		}
		for _, r := range refused {
			path := "deploy/deploy"
			if r.name == "unknown trigger" {
				path = "deploy/nope"
			}
			if status, out := post(t, s, path, r.body, r.headers); status != r.status {
				t.Errorf("%s: %d %s, want %d", r.name, status, out, r.status)
			}
		}
		nothingWritten(t, st, "deploy/deploy", "deploy")
		if logs := s.bot.Stderr(); strings.Contains(logs, deploySecret) || strings.Contains(logs, "v1.4.2") {
			t.Error("the log holds the secret or the body")
		}

		status, out := post(t, s, "deploy/deploy", body, signed(deploySecret, time.Now(), body, "d-1"))
		if status != http.StatusAccepted || !strings.Contains(out, `"outcome":"started"`) {
			t.Fatalf("signed delivery: %d %s", status, out)
		}
		r := s.waitRoot(t, "deploy", 1)
		if !strings.Contains(r.root.Text, "by trigger:deploy/deploy") {
			t.Errorf("announcement %q does not name the trigger", r.root.Text)
		}
		s.waitInThread(t, r, "the gate", hasPrefix("⏸ Run `"+r.id+"` is waiting at `confirm`."))
		if status, out := post(t, s, "deploy/deploy", body, signed(deploySecret, time.Now(), body, "d-1")); status != http.StatusOK ||
			!strings.Contains(out, `"duplicate":true`) || !strings.Contains(out, r.id) {
			t.Errorf("redelivery: %d %s", status, out)
		}
		s.fake.ThreadMessage(alice, channel, r.root.TS, "lgtm")
		s.waitStatus(t, r, "completed")
		s.waitInThread(t, r, "the final message", containsText("deployed v1.4.2"))
		events, err := st.Events(t.Context(), r.id)
		if err != nil {
			t.Fatal(err)
		}
		check := ""
		for _, e := range events {
			if e.Type == db.EventNodeCompleted && e.NodeID == "check" {
				check = string(e.Data)
			}
		}
		if want := fmt.Sprintf("checking v1.4.2; payload file has %d bytes; secret []", len(body)); !strings.Contains(check, want) {
			t.Errorf("check printed %s, want %q", check, want)
		}
		runs, err := st.ListRuns(t.Context(), db.RunFilter{Workflow: "deploy"})
		if err != nil || len(runs) != 1 || runs[0].UserID != "trigger:deploy/deploy" {
			t.Errorf("runs = %v, %v; want the one run, by the trigger", runs, err)
		}
	})
}

// githubHeaders are GitHub's headers of a delivery of body.
func githubHeaders(secret, event, id string, body []byte) map[string]string {
	return map[string]string{hooks.HeaderGitHubEvt: event, hooks.HeaderGitHubID: id,
		hooks.HeaderGitHubSig: "sha256=" + hex.EncodeToString(hooks.Sign(secret, nil, body))}
}

// TestGitHubTrigger: an issues.labeled delivery with a valid X-Hub-Signature-256 starts the
// workflow with the label and the issue number in its arguments; an event the trigger does not
// list (issues.opened), a bad signature and a payload whose label is an object (422) start nothing.
func TestGitHubTrigger(t *testing.T) {
	t.Parallel()
	env := botproc.Env(t)
	s := startTriggerBot(t, env, map[string]string{"GITHUB_HOOK_SECRET": githubSecret})
	st := openStore(t, env)
	labeled, err := json.Marshal(map[string]any{"action": "labeled", "label": map[string]any{"name": "needs triage"},
		"issue": map[string]any{"number": 1347, "title": "`rm -rf /` in the title"}, "sender": map[string]any{"login": "octocat"}})
	if err != nil {
		t.Fatal(err)
	}
	opened := bytes.Replace(labeled, []byte(`"labeled"`), []byte(`"opened"`), 1)
	if status, out := post(t, s, "triage/triage", labeled, githubHeaders("wrong", "issues", "g-0", labeled)); status != http.StatusUnauthorized {
		t.Errorf("bad signature: %d %s", status, out)
	}
	if status, out := post(t, s, "triage/triage", opened, githubHeaders(githubSecret, "issues", "g-1", opened)); status != http.StatusAccepted ||
		!strings.Contains(out, `"ignored":true`) {
		t.Errorf("issues.opened: %d %s", status, out)
	}
	objectLabel := bytes.Replace(labeled, []byte(`"name":"needs triage"`), []byte(`"name":{"nested":"object"}`), 1)
	if status, out := post(t, s, "triage/triage", objectLabel, githubHeaders(githubSecret, "issues", "g-3", objectLabel)); status != http.StatusUnprocessableEntity ||
		!strings.Contains(out, "payload.label.name is an object") {
		t.Errorf("an object where args want text: %d %s", status, out)
	}
	nothingWritten(t, st, "triage/triage", "triage")
	if status, out := post(t, s, "triage/triage", labeled, githubHeaders(githubSecret, "issues", "g-2", labeled)); status != http.StatusAccepted {
		t.Fatalf("issues.labeled: %d %s", status, out)
	}
	r := s.waitRoot(t, "triage", 1)
	s.waitStatus(t, r, "completed")
	s.waitInThread(t, r, "the output", containsText(`args [label="needs triage" issue=1347 event=issues.labeled] sender ["login":"octocat"]`))

	// Visible: the dashboard's triggers page and `bot workflow triggers --json` show the fire and its run.
	resp, err := http.Get(strings.TrimSuffix(s.bot.URL(), "/") + "/triggers")
	if err != nil {
		t.Fatal(err)
	}
	page, err := io.ReadAll(resp.Body)
	_ = resp.Body.Close()
	if err != nil || !strings.Contains(string(page), "/runs/"+r.id) || !strings.Contains(string(page), "issues.labeled") {
		t.Errorf("the triggers page lacks the fire of run %s: %v\n%s", r.id, err, page)
	}
	out, err := botproc.CommandContext(t.Context(), t, env, "workflow", "triggers", "--json").Output()
	if err != nil {
		t.Fatalf("bot workflow triggers --json: %v", err)
	}
	var listed []struct {
		Trigger string `json:"trigger"`
		Fires   []struct {
			Event    string `json:"event"`
			Outcome  string `json:"outcome"`
			RunID    string `json:"run_id"`
			RunState string `json:"run_state"`
		} `json:"fires"`
	}
	if err := json.Unmarshal(out, &listed); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	found := false
	for _, tr := range listed {
		if tr.Trigger == "triage/triage" && len(tr.Fires) == 1 {
			f := tr.Fires[0]
			found = f.Event == "issues.labeled" && f.Outcome == "started" && f.RunID == r.id && f.RunState == "completed"
		}
	}
	if !found {
		t.Errorf("bot workflow triggers --json:\n%s", out)
	}
}

// TestTriggerWithoutSecret: a webhook whose secret variable is unset is named at start-up and
// refuses every delivery with 503, signed or not, writing nothing.
func TestTriggerWithoutSecret(t *testing.T) {
	t.Parallel()
	s := startTriggerBot(t, botproc.Env(t), map[string]string{"GITHUB_HOOK_SECRET": githubSecret})
	s.bot.WaitLog("hooks.trigger_disabled", map[string]string{"trigger": "deploy/deploy (set DEPLOY_HOOK_SECRET)"})
	// stdout and the log are separate streams: wait for the line rather than read stdout once.
	s.bot.WaitStdout(regexp.MustCompile(regexp.QuoteMeta("Triggers disabled until their secret is set in the environment (and the bot restarted): deploy/deploy (set DEPLOY_HOOK_SECRET)")))
	body := []byte(`{"ref":"main"}`)
	for _, secret := range []string{"", deploySecret} {
		if status, out := post(t, s, "deploy/deploy", body, signed(secret, time.Now(), body, "n-1")); status != http.StatusServiceUnavailable ||
			!strings.Contains(out, "DEPLOY_HOOK_SECRET") {
			t.Errorf("delivery signed with %q: %d %s", secret, status, out)
		}
	}
	nothingWritten(t, openStore(t, map[string]string{"THREADFLOW_HOME": s.home + "/threadflow"}), "deploy/deploy", "deploy")
}
