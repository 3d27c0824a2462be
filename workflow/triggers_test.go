package workflow

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"
)

const triggerNodes = "nodes:\n  - id: a\n    bash: echo\n"

func TestTriggersParse(t *testing.T) {
	t.Parallel()
	src := "name: rel\naccess:\n  channels: [slack:C1, web]\ntriggers:\n" +
		"  - schedule: {cron: \"0 9 * * 1-5\", timezone: Europe/Berlin, args: nightly, post_to: slack:C1}\n" +
		"  - schedule: {name: fast, cron: \"*/5 * * * * *\", post_to: web, overlap: queue, catch_up: none}\n" +
		"  - webhook: {name: deploy, secret_env: DEPLOY_HOOK_SECRET, post_to: web, args: \"deploy ${{ payload.ref }} (${{ event }})\"}\n" +
		"  - github: {name: triage, events: [issues.labeled, push], secret_env: GH_SECRET, post_to: slack:C1,\n" +
		"      args: {label: \"${{ payload.label.name }}\", issue: \"${{ payload.issue.number }}\"}}\n" + triggerNodes
	w := mustParse(t, "wf.yaml", []byte(src))
	if len(w.Triggers) != 4 {
		t.Fatalf("triggers = %d", len(w.Triggers))
	}
	sched, fast, hook, gh := w.Triggers[0], w.Triggers[1], w.Triggers[2], w.Triggers[3]
	if sched.Name != "schedule" || sched.Overlap != OverlapSkip || sched.CatchUp != CatchUpOne || sched.Location.String() != "Europe/Berlin" {
		t.Errorf("schedule defaults: %+v", sched)
	}
	from := time.Date(2026, 3, 27, 12, 0, 0, 0, time.UTC)                                  // a Friday
	if got := sched.Next(from); !got.Equal(time.Date(2026, 3, 30, 7, 0, 0, 0, time.UTC)) { // Monday 9:00 CEST
		t.Errorf("next = %v", got.UTC())
	}
	if got := fast.Next(from); !got.Equal(from.Add(5 * time.Second)) {
		t.Errorf("seconds field: next = %v", got)
	}
	if fast.Overlap != OverlapQueue || fast.CatchUp != CatchUpNone {
		t.Errorf("fast: %+v", fast)
	}
	if hook.Requester("rel") != "trigger:rel/deploy" || hook.SecretEnv != "DEPLOY_HOOK_SECRET" {
		t.Errorf("hook: %+v", hook)
	}
	var payload any
	if err := json.Unmarshal([]byte(`{"ref":"v1.2","label":{"name":"needs triage"},"issue":{"number":42},"obj":{"a":1}}`), &payload); err != nil {
		t.Fatal(err)
	}
	text, _, err := hook.Args.Fill(payload, "deploy")
	if err != nil || text != "deploy v1.2 (deploy)" {
		t.Errorf("hook args = %q, %v", text, err)
	}
	text, named, err := gh.Args.Fill(payload, "issues.labeled")
	if err != nil || text != `label="needs triage" issue=42` || named["label"] != "needs triage" || named["issue"] != "42" {
		t.Errorf("github args = %q %v %v", text, named, err)
	}
	if !gh.Matches("issues.labeled") || !gh.Matches("push") || gh.Matches("issues.opened") {
		t.Error("github event matching")
	}
	bad := &Template{parts: []templatePart{{ref: []string{"payload", "obj"}}}}
	var argErr *ArgError
	if _, err := bad.Fill(payload, ""); !errors.As(err, &argErr) {
		t.Errorf("an object in args: %v", err)
	}
}

// TestTriggersWithConcurrencyLoad: a workflow may have triggers and a concurrency group; a fired
// run's group is filled from the inputs its trigger's args give.
func TestTriggersWithConcurrencyLoad(t *testing.T) {
	t.Parallel()
	src := "name: rel\ninputs:\n  - {name: env, type: choice, choices: [staging, prod], required: true}\n" +
		"concurrency: {group: \"release-${inputs.env}\", when_busy: refuse}\ntriggers:\n" +
		"  - schedule: {cron: \"0 2 * * *\", post_to: web, args: \"env=prod\"}\n" + triggerNodes
	w := mustParse(t, "wf.yaml", []byte(src))
	if len(w.Triggers) != 1 || w.Concurrency == nil || w.Concurrency.WhenBusy != WhenBusyRefuse {
		t.Fatalf("triggers %d, concurrency %+v", len(w.Triggers), w.Concurrency)
	}
	inputs, err := w.RunInputs([]string{"env=prod"})
	if err != nil {
		t.Fatal(err)
	}
	if g, err := w.GroupFor(inputs); err != nil || g != "release-prod" {
		t.Errorf("group = %q, %v; want release-prod", g, err)
	}
}

func TestTriggersReportProblemsWithPosition(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, src string
		want      []string
	}{
		{"bad cron and zone", "name: x\ntriggers:\n  - schedule: {cron: \"61 * * * *\", timezone: Mars/Olympus, post_to: web, overlap: never}\n" + triggerNodes, []string{
			"wf.yaml:3:22: `cron` \"61 * * * *\" is not a schedule: end of range (61) above maximum (59): 61; write minute hour day-of-month month day-of-week (like \"0 9 * * 1-5\"), optionally with seconds first",
			"wf.yaml:3:46: `timezone` \"Mars/Olympus\" is not an IANA time zone; write one like Europe/Berlin, America/New_York or UTC",
			"wf.yaml:3:83: `overlap` \"never\" is not accepted; use one of: skip, queue, allow"}},
		{"webhook without name, secret, post_to", "name: x\ntriggers:\n  - webhook: {args: hi}\n" + triggerNodes, []string{
			"wf.yaml:3:5: `webhook` needs a `name`: it is the last part of its address, POST /hooks/<workflow>/<name>",
			"wf.yaml:3:5: `webhook` needs `post_to`: where its runs talk, like slack:C0123ABCD, discord:<channel id> or web",
			"wf.yaml:3:5: `webhook` needs `secret_env`: the environment variable holding the secret its deliveries are signed with"}},
		{"schedule reading a payload", "name: x\ntriggers:\n  - schedule: {cron: \"@daily\", post_to: web, args: \"a ${{ payload.x }}\"}\n" + triggerNodes, []string{
			"wf.yaml:3:55: a schedule has no delivery to read; `args` cannot use ${{ }}; write the arguments as plain text"}},
		{"bad reference and secret name", "name: x\ntriggers:\n  - webhook: {name: h, secret_env: PATH, post_to: console, args: \"${{ secrets.x }}\"}\n" + triggerNodes, []string{
			"wf.yaml:3:36: `secret_env` PATH is a variable the bot or its processes use for something else; name a variable of its own, like DEPLOY_HOOK_SECRET",
			"wf.yaml:3:51: `post_to` \"console\" is not a place a run can talk in; write slack:<channel id> (like slack:C0123ABCD), discord:<channel id> or web",
			"wf.yaml:3:67: \"${{ secrets.x }}\" is not something args can read; write ${{ event }} or ${{ payload.<field>.<field> }} (like ${{ payload.issue.number }})"}},
		{"post_to outside access.channels, duplicate names", "name: x\naccess: {channels: [slack:C1]}\ntriggers:\n" +
			"  - webhook: {name: h, secret_env: S, post_to: slack:C2}\n  - github: {name: h, secret_env: S, post_to: slack:C1, events: [Issues]}\n" + triggerNodes, []string{
			"wf.yaml:4:5: trigger h posts to slack:C2, which `access.channels` does not list; add it there or post elsewhere",
			"wf.yaml:5:5: trigger name \"h\" is used twice (first at line 4); give each trigger its own `name`",
			"wf.yaml:5:66: event \"Issues\" is not a GitHub event; write the X-GitHub-Event name, optionally with the payload's action after a dot, like issues.labeled or push"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := Parse("wf.yaml", []byte(tt.src))
			if w != nil {
				t.Errorf("Parse returned a workflow for an invalid file")
			}
			assertErrors(t, err, tt.want)
		})
	}
}

// The nightly and GitHub examples of docs/workflows.md ("Triggers") are valid workflows.
func TestDocsTriggerExamplesParse(t *testing.T) {
	t.Parallel()
	for i, src := range docBlocks(t, "## Triggers", 2) {
		w, err := Parse(fmt.Sprintf("example%d.yaml", i+1), []byte(src))
		if err != nil || len(w.Triggers) != 1 {
			t.Errorf("example %d: %v", i+1, err)
		}
	}
}
