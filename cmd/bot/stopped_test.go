package main

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"threadflow/testkit"
)

// hangWorkflow prints a line, then waits for a file that is never created: a node that hung.
const hangWorkflow = "name: hang\nnodes:\n  - id: build\n    bash: |\n      echo compiling\n      while [ ! -e \"$ARGUMENTS\" ]; do sleep 0.05; done\n  - id: after\n    depends_on: [build]\n    bash: echo after\n"

// hangEnv is a terminal's environment at default log settings, with hang installed and ops an
// admin who may cancel anyone's run.
func hangEnv(t *testing.T) map[string]string {
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "hang.yaml"), hangWorkflow)
	return map[string]string{"THREADFLOW_HOME": t.TempDir(), "WORKFLOWS_DIR": dir, "ADMIN_USER_IDS": "console:ops"}
}

// waitPrinted waits until the run started by the terminal b has printed its first line, and
// returns the run's id.
func waitPrinted(t *testing.T, env map[string]string, b *inProcessBot) string {
	t.Helper()
	var id string
	testkit.Eventually(t, "the hung node's first line", func() bool {
		if m := runIDPattern.FindStringSubmatch(b.stdout.String()); m != nil {
			id = m[1]
			out, _ := cli(t, env, "workflow", "logs", id, "build")
			return out == "compiling\n"
		}
		return false
	})
	return id
}

var cancelledByOps = regexp.MustCompile(`was cancelled by (console:)?ops\b`)

// A terminal whose run someone else cancels says who did, without a log line, and `bot workflow`
// exits 4 (README, "Exit statuses"); the hung node is stopped, and what it printed stays readable.
func TestTerminalSaysWhoCancelledItsRun(t *testing.T) {
	env := hangEnv(t)
	never := filepath.Join(t.TempDir(), "never")
	b := runBot(t, env, "workflow", "run", "hang", never)
	id := waitPrinted(t, env, b)
	if _, code := cli(t, env, "workflow", "cancel", "--user", "ops", id); code != 0 {
		t.Fatalf("cancel by an admin = exit %d", code)
	}
	err := b.result(t)
	stderr := b.stderr.String()
	if exitCode(err) != exitCancelled || !strings.Contains(stderr, "threadflow: while this command waited, run "+id+" ") || !cancelledByOps.MatchString(stderr) {
		t.Errorf("the waiting terminal = exit %d (want %d), stderr:\n%s\nwant who cancelled the run", exitCode(err), exitCancelled, stderr)
	}
	for _, l := range strings.Split(stderr, "\n") {
		if logLine.MatchString(l) {
			t.Errorf("a log line reached the terminal at default settings: %q", l)
		}
	}
	l := runBot(t, env, "workflow", "logs", id, "build")
	if code := exitCode(l.result(t)); code != 0 || l.stdout.String() != "compiling\n" ||
		!strings.Contains(l.stderr.String(), "partial output of attempt 1 of build (10 bytes): the run was cancelled while it ran") {
		t.Errorf("logs of the cancelled node = exit %d, stdout %q, stderr %q", code, l.stdout, l.stderr)
	}

	c := runBot(t, env, "chat", "/workflow run hang "+never)
	id = waitPrinted(t, env, c)
	if _, code := cli(t, env, "workflow", "cancel", "--user", "ops", id); code != 0 {
		t.Fatalf("cancel by an admin = exit %d", code)
	}
	err = c.result(t)
	if out := c.stdout.String(); exitCode(err) != 0 || !strings.Contains(out, "🛑 Run `"+id+"` of `hang` ") || !cancelledByOps.MatchString(out) {
		t.Errorf("bot chat = exit %d, stdout:\n%s\nwant who cancelled the run", exitCode(err), out)
	}
	if s := c.stderr.String(); strings.Contains(s, `"level"`) {
		t.Errorf("a log line reached the chat terminal:\n%s", s)
	}
}

// logs RUN separates the outputs of the nodes: one that does not end with a newline does not
// glue the next header onto its last line.
func TestWorkflowLogsSeparatesOutputsWithoutANewline(t *testing.T) {
	env := cliEnv(t)
	addWorkflow(t, env, "terse", "name: terse\nnodes:\n  - id: a\n    bash: printf 'no newline'\n  - id: b\n    depends_on: [a]\n    bash: printf 'done'\n")
	_, id := runWorkflow(t, env, 0, "terse")
	out, code := cli(t, env, "workflow", "logs", id)
	want := "==> a (attempt 1, completed, 10 bytes) <==\nno newline\n==> b (attempt 1, completed, 4 bytes) <==\ndone\n"
	if code != 0 || out != want {
		t.Errorf("workflow logs RUN = exit %d:\n%q\nwant\n%q", code, out, want)
	}
	if out, _ = cli(t, env, "workflow", "logs", id, "a"); out != "no newline" {
		t.Errorf("logs of one node = %q, want its output exactly", out)
	}
}

// A node name the run does not have is answered with the run's nodes, and a near miss with a
// "did you mean".
func TestWorkflowLogsOfAnUnknownNodeListsTheNodes(t *testing.T) {
	env := cliEnv(t)
	_, id := runWorkflow(t, env, 0, "hello", "world")
	b := runBot(t, env, "workflow", "logs", id, "gret")
	want := `threadflow: run ` + id + ` has no node "gret"; its nodes are greet, echo-back (did you mean "greet"?)`
	if err := b.result(t); exitCode(err) != 2 || !strings.Contains(b.stderr.String(), want) {
		t.Errorf("logs of an unknown node = exit %d, stderr %q; want 2 and %q", exitCode(err), b.stderr, want)
	}
}

// Every command and every flag of bot, bot chat and bot workflow answers a near miss with what was
// meant, and cancel is a workflow command as it is in chat.
func TestEveryCommandAndFlagGetsADidYouMean(t *testing.T) {
	for _, tt := range []struct{ args, want string }{
		{"workflow cancle abcdef", `unknown workflow command "cancle" (did you mean "cancel"?)`},
		{"workflow cancel", "usage: bot workflow cancel|abandon [--user NAME] RUN_ID"},
		{"workflow runs --jsn", `bot workflow runs: flag provided but not defined: -jsn (did you mean "--json"?); usage: bot workflow runs [--json]`},
		{"workflow status --jsno abcdef", `flag provided but not defined: -jsno (did you mean "--json"?)`},
		{"workflow runs --state runing", `use one of queued, running, paused, completed, failed, cancelled (did you mean "running"?)`},
		{"workflow run --usr bob hello", `bot workflow run: flag provided but not defined: -usr (did you mean "--user"?); usage: bot workflow run [--user NAME]`},
		{"workflow approve --usr bob abcdef", `flag provided but not defined: -usr (did you mean "--user"?)`},
		{"workflow logs --json abcdef", "bot workflow logs: flag provided but not defined: -json; usage: bot workflow logs RUN_ID [NODE]"},
		{"chat --usr bob", `flag provided but not defined: -usr (did you mean "--user"?); bot chat -h lists the flags`},
		{"serve -log-levle=warn", `serve: flag provided but not defined: -log-levle (did you mean "-log-level"?)`},
		{"migrate -hom=x", `migrate: flag provided but not defined: -hom (did you mean "-home"?)`},
	} {
		b := runBot(t, cliEnv(t), strings.Fields(tt.args)...)
		if err := b.result(t); exitCode(err) != 2 || !strings.Contains(b.stderr.String(), tt.want) {
			t.Errorf("bot %s = exit %d, stderr %q; want 2 and %q", tt.args, exitCode(err), b.stderr, tt.want)
		}
	}
}
