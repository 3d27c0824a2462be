package main

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// accessWorkflows writes a workflow only console:alice may start and one that may be started only
// in a Slack channel, and points WORKFLOWS_DIR at them.
func accessWorkflows(t *testing.T, env map[string]string) {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "restricted.yaml"), `name: restricted
access:
  run: ["console:alice"]
nodes:
  - id: a
    bash: echo "restricted ran"
`)
	writeFile(t, filepath.Join(dir, "elsewhere.yaml"), `name: elsewhere
access:
  channels: ["slack:C1"]
nodes:
  - id: a
    bash: echo "elsewhere ran"
`)
	writeFile(t, filepath.Join(dir, "gate.yaml"), `name: gate
nodes:
  - id: confirm
    approval:
      approvers: ["slack:UAPP", "console:bob"]
  - id: after
    depends_on: [confirm]
    bash: echo "after the gate"
`)
	env["WORKFLOWS_DIR"] = dir
}

// runCount is how many runs the bot's database holds, as `bot workflow runs --json` lists them.
func runCount(t *testing.T, env map[string]string) int {
	t.Helper()
	out, code := cli(t, env, "workflow", "runs", "--json")
	var runs []json.RawMessage
	if err := json.Unmarshal([]byte(out), &runs); code != 0 || err != nil {
		t.Fatalf("workflow runs --json = exit %d (%v):\n%s", code, err, out)
	}
	return len(runs)
}

// cliErr runs the bot and returns its exit status and what it said on stderr.
func cliErr(t *testing.T, env map[string]string, args ...string) (string, int) {
	t.Helper()
	b := runBot(t, env, args...)
	err := b.result(t)
	return b.stderr.String(), exitCode(err)
}

func TestWorkflowAccessInTheTerminal(t *testing.T) {
	env := cliEnv(t)
	accessWorkflows(t, env)

	msg, code := cliErr(t, env, "workflow", "run", "--user", "mallory", "restricted")
	if code != 2 || !strings.Contains(msg, "You (console:mallory) may not start workflow restricted: its access.run allows only console:alice. Nothing was started") {
		t.Errorf("run by someone outside access.run = exit %d:\n%s", code, msg)
	}
	msg, code = cliErr(t, env, "workflow", "run", "elsewhere")
	if code != 2 || !strings.Contains(msg, "Workflow elsewhere cannot be started here: its access.channels allows only slack:C1. Nothing was started.") {
		t.Errorf("run outside access.channels = exit %d:\n%s", code, msg)
	}
	if n := runCount(t, env); n != 0 {
		t.Fatalf("%d runs in the database after two refusals, want 0", n)
	}
	out, _ := cli(t, env, "workflow", "list")
	if strings.Contains(out, "restricted") || strings.Contains(out, "elsewhere") || !strings.Contains(out, "gate") {
		t.Errorf("workflow list as console:local shows:\n%s\nwant neither restricted nor elsewhere, and gate", out)
	}
	out, code = cli(t, env, "workflow", "run", "--user", "alice", "restricted")
	if code != 0 || !strings.Contains(out, "restricted ran") {
		t.Errorf("run by console:alice = exit %d:\n%s", code, out)
	}
	if n := runCount(t, env); n != 1 {
		t.Errorf("%d runs after alice's, want 1", n)
	}
}

// The terminal acts only as console: names; it cannot prove who a Slack or web user is.
func TestTerminalActsOnlyAsConsoleNames(t *testing.T) {
	env := cliEnv(t)
	accessWorkflows(t, env)
	out, code := cli(t, env, "workflow", "run", "gate")
	m := runIDPattern.FindStringSubmatch(out)
	if code != exitPaused || m == nil {
		t.Fatalf("workflow run gate = exit %d, want %d:\n%s", code, exitPaused, out)
	}
	for _, args := range [][]string{
		{"workflow", "approve", "--user", "slack:UAPP", m[1]},
		{"workflow", "run", "--user", "web:alice", "gate"},
		{"chat", "--user", "discord:1234", "lgtm"},
	} {
		msg, code := cliErr(t, env, args...)
		if code != 2 || !strings.Contains(msg, "the terminal acts only as console: names") || !strings.Contains(msg, "Use --user NAME (console:NAME)") {
			t.Errorf("%s = exit %d, want 2 with the reason:\n%s", strings.Join(args, " "), code, msg)
		}
	}
	out, _ = cli(t, env, "workflow", "status", m[1])
	if !strings.Contains(out, "paused") {
		t.Errorf("after the refused approval the run is not paused any more:\n%s", out)
	}
	if n := runCount(t, env); n != 1 {
		t.Errorf("%d runs, want only the first", n)
	}
	out, code = cli(t, env, "workflow", "approve", "--user", "console:bob", m[1])
	if code != 0 || !strings.Contains(out, "Approved by console:bob") {
		t.Errorf("approve --user console:bob = exit %d:\n%s", code, out)
	}
}
