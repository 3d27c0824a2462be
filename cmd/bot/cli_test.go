package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// cli runs one bot command to completion and returns its stdout and exit status.
func cli(t *testing.T, env map[string]string, args ...string) (string, int) {
	t.Helper()
	b := runBot(t, env, args...)
	err := b.result(t)
	return b.stdout.String(), exitCode(err)
}

// cliEnv is the environment of an in-process command: its own home, and only errors logged.
func cliEnv(t testing.TB) map[string]string {
	return map[string]string{"THREADFLOW_HOME": t.TempDir(), "LOG_LEVEL": "error"}
}

var runIDPattern = regexp.MustCompile("run `([0-9a-z]{10})`")

// runWorkflow runs `bot workflow run args...` to completion and returns what it printed and the
// run's id, failing the test unless it exits with want.
func runWorkflow(t *testing.T, env map[string]string, want int, args ...string) (out, id string) {
	t.Helper()
	out, code := cli(t, env, append([]string{"workflow", "run"}, args...)...)
	m := runIDPattern.FindStringSubmatch(out)
	if code != want || m == nil {
		t.Fatalf("workflow run %v = exit %d, want %d with a run id:\n%s", args, code, want, out)
	}
	return out, m[1]
}

// addWorkflow writes name.yaml into the WORKFLOWS_DIR of env, a new directory unless set, and
// returns the file's path.
func addWorkflow(t *testing.T, env map[string]string, name, src string) string {
	t.Helper()
	if env["WORKFLOWS_DIR"] == "" {
		env["WORKFLOWS_DIR"] = t.TempDir()
	}
	file := filepath.Join(env["WORKFLOWS_DIR"], name+".yaml")
	writeFile(t, file, src)
	return file
}

func TestWorkflowValidateReportsPositions(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.yaml")
	bad := filepath.Join(dir, "bad.yaml")
	writeFile(t, good, "name: good\nnodes:\n  - id: a\n    bash: echo hi\n")
	writeFile(t, bad, "name: bad\nnodes:\n  - id: a\n    bash: echo hi\n    depend_on: [b]\n")
	out, code := cli(t, cliEnv(t), "workflow", "validate", good, bad)
	if code == 0 {
		t.Fatalf("validate of an invalid file exited 0:\n%s", out)
	}
	if !strings.Contains(out, good+": ok") || !strings.Contains(out, bad+":5:5: unknown field") || !strings.Contains(out, "depends_on") {
		t.Fatalf("validate printed:\n%s", out)
	}
}

func writeFile(t *testing.T, path, src string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestWorkflowRunExitStatusesAndApprove(t *testing.T) {
	env := cliEnv(t)
	out, code := cli(t, env, "workflow", "run", "hello", "world")
	if code != 0 || !strings.Contains(out, "Hello, world!") || !strings.Contains(out, "✓ greet") {
		t.Fatalf("workflow run hello = exit %d:\n%s", code, out)
	}
	out, code = cli(t, env, "workflow", "run", "release", "v9")
	m := runIDPattern.FindStringSubmatch(out)
	if code != exitPaused || m == nil || !strings.Contains(out, "waiting at `confirm`") {
		t.Fatalf("workflow run release = exit %d, want %d (paused):\n%s", code, exitPaused, out)
	}
	id := m[1]
	out, code = cli(t, env, "workflow", "status", id[:6])
	if code != 0 || !strings.Contains(out, "paused") || !strings.Contains(out, "✓ check") {
		t.Fatalf("workflow status = exit %d:\n%s", code, out)
	}
	// Every node, the one not reached yet included; waiting at a gate is not running.
	if !strings.Contains(out, "• ⏸ confirm\n") || !strings.Contains(out, "• · ship\n") || strings.Contains(out, "▶") {
		t.Errorf("workflow status of a run paused at confirm:\n%s", out)
	}
	// release does not let its requester approve it: the terminal's user asks someone else.
	out, code = cli(t, env, "workflow", "approve", id, "ship it on Friday")
	if code != exitPaused || !strings.Contains(out, "does not allow self-approval") || !strings.Contains(out, "--user NAME") {
		t.Fatalf("self-approval = exit %d, want %d with the refusal and how to answer as someone else:\n%s", code, exitPaused, out)
	}
	out, code = cli(t, env, "workflow", "approve", "--user", "bob", id, "ship it on Friday")
	if code != 0 || !strings.Contains(out, "Approved by console:bob") || !strings.Contains(out, "note from the approver: ship it on Friday") {
		t.Fatalf("workflow approve --user bob = exit %d:\n%s", code, out)
	}
	broken := t.TempDir()
	writeFile(t, filepath.Join(broken, "broken.yaml"), "name: broken\nnodes:\n  - id: a\n    bash: exit 4\n")
	env["WORKFLOWS_DIR"] = broken
	out, code = cli(t, env, "workflow", "run", "broken")
	if code != exitFailed || !strings.Contains(out, "failed at node") {
		t.Fatalf("workflow run broken = exit %d, want %d:\n%s", code, exitFailed, out)
	}
}

// bot chat is how a newcomer tries the bot: each message waits for the runs it started, so a later
// message answers the gate the run reached, and a later call continues the same conversation.
func TestChatContinuesAConversationAcrossCalls(t *testing.T) {
	env := cliEnv(t)
	out, code := cli(t, env, "chat", "/workflow run release v2", "/workflow status")
	if code != 0 || !strings.Contains(out, "waiting at `confirm`") || !strings.Contains(out, "paused at `confirm`") {
		t.Fatalf("first chat = exit %d:\n%s", code, out)
	}
	out, code = cli(t, env, "chat", "nah, fix the tests first?")
	if code != 0 || !strings.Contains(out, "I could not tell whether that approves or rejects `confirm`") || strings.Contains(out, "shipped") {
		t.Fatalf("a question at the gate = exit %d:\n%s", code, out)
	}
	out, code = cli(t, env, "chat", "--user", "bob", "lgtm, ship it")
	if code != 0 || !strings.Contains(out, "Approved by console:bob") || !strings.Contains(out, "shipped v2") || !strings.Contains(out, "note from the approver: ship it") {
		t.Fatalf("second chat = exit %d:\n%s", code, out)
	}
	out, _ = cli(t, env, "chat", "--conversation", "elsewhere", "lgtm")
	if strings.Contains(out, "Approved") {
		t.Fatalf("an answer in another conversation reached the run:\n%s", out)
	}
}

// bot workflow logs prints a node's full output, not only the part kept inline.
func TestWorkflowLogsPrintsTheFullOutput(t *testing.T) {
	env := cliEnv(t)
	addWorkflow(t, env, "loud", "name: loud\nnodes:\n  - id: print\n    bash: seq 1 20000\n  - id: after\n    depends_on: [print]\n    bash: echo done\n")
	_, id := runWorkflow(t, env, 0, "loud")
	out, code := cli(t, env, "workflow", "logs", id, "print")
	if code != 0 || !strings.HasPrefix(out, "1\n2\n") || !strings.HasSuffix(out, "\n19999\n20000\n") {
		t.Fatalf("workflow logs RUN print = exit %d, %d bytes; want all of seq 1 20000", code, len(out))
	}
	out, code = cli(t, env, "workflow", "logs", id)
	if code != 0 || !strings.Contains(out, "==> print (attempt 1, completed, 108894 bytes) <==\n1\n") || !strings.HasSuffix(out, "==> after (attempt 1, completed, 5 bytes) <==\ndone\n") {
		t.Fatalf("workflow logs RUN = exit %d:\n%.300s", code, out)
	}
	if out, code = cli(t, env, "workflow", "logs", id, "nosuch"); code != 2 {
		t.Fatalf("logs of an unknown node = exit %d, want 2:\n%s", code, out)
	}
}

// A node that failed before an all_done clean-up still fails the run: exit status 1, and the output
// says which node failed and why.
func TestWorkflowRunFailsWhenANodeFailedBeforeItsCleanUp(t *testing.T) {
	env := cliEnv(t)
	addWorkflow(t, env, "ci", `name: ci
nodes:
  - id: build
    bash: echo "linker exploded" >&2; exit 3
  - id: cleanup
    depends_on: [build]
    trigger_rule: all_done
    bash: echo cleaned up
`)
	out, code := cli(t, env, "workflow", "run", "ci")
	if code != exitFailed || !strings.Contains(out, "failed at node `build`") || !strings.Contains(out, "linker exploded") || !strings.Contains(out, "✓ cleanup") {
		t.Fatalf("workflow run ci = exit %d, want %d naming build and its error after cleanup ran:\n%s", code, exitFailed, out)
	}
}

// A terminal on a disk fuller than MIN_FREE_DISK says so and exits instead of waiting for a run it
// will never claim; nothing is started.
func TestTerminalRefusesToRunOnALowDisk(t *testing.T) {
	env := cliEnv(t)
	env["MIN_FREE_DISK"] = "1000PB"
	for _, args := range [][]string{{"workflow", "run", "hello"}, {"chat", "/workflow run hello"}} {
		b := runBot(t, env, args...)
		code := exitCode(b.result(t))
		if errOut := b.stderr.String(); code != 1 || !strings.Contains(errOut, "less than MIN_FREE_DISK") || !strings.Contains(errOut, "lower MIN_FREE_DISK") {
			t.Fatalf("bot %v on a low disk = exit %d, stderr:\n%s", args, code, errOut)
		}
	}
	if entries, _ := os.ReadDir(filepath.Join(env["THREADFLOW_HOME"], "runs")); len(entries) > 0 {
		t.Fatalf("a refused terminal left %d run directories", len(entries))
	}
}

// What bot workflow prints when a run pauses at a gate depends on who runs it: the gate's rules
// decide whether the command that continues it is offered, or who may approve and how the person
// may act as them here.
func TestPausedHintOffersOnlyWhatTheUserMayDo(t *testing.T) {
	env := cliEnv(t)
	addWorkflow(t, env, "guarded", `name: guarded
nodes:
  - id: confirm
    approval:
      message: Ship it?
      approvers: ["console:alice", "console:bob"]
      allow_self_approval: false
`)
	hint := func(args ...string) (stdout, said string) {
		t.Helper()
		b := runBot(t, env, args...)
		err := b.result(t)
		if exitCode(err) != exitPaused {
			t.Fatalf("%v = exit %d (%v), want %d:\n%s", args, exitCode(err), err, exitPaused, b.stdout)
		}
		return b.stdout.String(), err.Error()
	}
	out, got := hint("workflow", "run", "--user", "alice", "guarded")
	m := runIDPattern.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no run id in:\n%s", out)
	}
	id := m[1]
	if want := "run " + id + " is paused at gate confirm. It needs an approval from someone other than you: console:bob. " +
		"You may reject it: bot workflow reject --user alice " + id + " [REASON]. To approve as someone else here: bot workflow approve --user bob " + id; got != want {
		t.Errorf("the requester is told\n%q\nwant\n%q", got, want)
	}
	if _, got = hint("workflow", "approve", "--user", "mallory", id); got != "run "+id+" is paused at gate confirm. Only console:alice, console:bob may answer it. "+
		"To approve as someone else here: bot workflow approve --user alice "+id {
		t.Errorf("someone the gate does not name is told %q", got)
	}
	if _, got = hint("workflow", "reject", "--user", "carol", id); got != "run "+id+" is paused at gate confirm. Only console:alice, console:bob may answer it. "+
		"To approve as someone else here: bot workflow approve --user alice "+id {
		t.Errorf("someone the gate does not name, rejecting, is told %q", got)
	}
	if _, got = hint("workflow", "resume", "--user", "bob", id); got != "run "+id+" is paused at gate confirm; continue it with: bot workflow approve --user bob "+id+
		" (or reject it: bot workflow reject --user bob "+id+")" {
		t.Errorf("an approver is told %q", got)
	}
}
