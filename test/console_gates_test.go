package test

import (
	"context"
	"errors"
	"io"
	"os/exec"
	"regexp"
	"strings"
	"testing"
	"time"

	"threadflow/db"
	"threadflow/testkit"
	"threadflow/testkit/botproc"
)

// terminal runs the real `bot` binary as a person at a terminal would, on env's database, with the
// chat suite's workflows and the gate workflows of console users alice, bob and carol.
type terminal struct {
	t   *testing.T
	env map[string]string
	// deadline bounds one bot command; 0 means testkit.Deadline.
	deadline time.Duration
}

func newTerminal(t *testing.T, env map[string]string) *terminal {
	t.Helper()
	env["WORKFLOWS_DIR"] = workflowDir(t, chatWorkflows, gateWorkflows("console:alice", "console:bob", "console:carol"))
	return &terminal{t: t, env: env}
}

// run runs `bot ARGS...` to the end and returns its standard output and exit status.
func (c *terminal) run(args ...string) (string, int) {
	c.t.Helper()
	deadline := c.deadline
	if deadline == 0 {
		deadline = testkit.Deadline
	}
	ctx, cancel := context.WithTimeout(context.Background(), deadline)
	defer cancel()
	cmd := botproc.CommandContext(ctx, c.t, c.env, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit):
		return string(out), exit.ExitCode()
	case err != nil:
		c.t.Fatalf("bot %v: %v\n%s", args, err, stderr.String())
	}
	return string(out), 0
}

// chat is `bot chat --user USER MESSAGE...` in the conversation "gates".
func (c *terminal) chat(user string, msgs ...string) string {
	c.t.Helper()
	out, code := c.run(append([]string{"chat", "--conversation", "gates", "--user", user}, msgs...)...)
	if code != 0 {
		c.t.Fatalf("bot chat as %s exited %d:\n%s", user, code, out)
	}
	return out
}

var consoleRunID = regexp.MustCompile("run `([0-9a-z]{10})`")

func wantIn(t *testing.T, what, out string, wants ...string) {
	t.Helper()
	for _, w := range wants {
		if !strings.Contains(out, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, out)
		}
	}
}

// TestTerminalGateRules: the gate rules through `bot chat` and `bot workflow`, as a team sharing the
// bot's database from their terminals would meet them.
func TestTerminalGateRules(t *testing.T) {
	t.Parallel()
	botproc.ForEachEngine(t, botproc.Env, func(t *testing.T, env map[string]string) {
		c := newTerminal(t, env)
		out := c.chat("alice", "/workflow run guarded v1")
		m := consoleRunID.FindStringSubmatch(out)
		if m == nil {
			t.Fatalf("no run id in:\n%s", out)
		}
		id := m[1]
		wantIn(t, "the gate message", out, "is waiting at `confirm`", "Who may answer: console:alice, console:bob, console:carol.",
			"It needs 2 approvals from different people", "reply here with a clear yes or no", "/workflow approve "+id+" [note]")

		wantIn(t, "alice's own approval", c.chat("alice", "lgtm"), "does not allow self-approval", "Nothing was changed.", "--user NAME")
		wantIn(t, "mallory's approval", c.chat("mallory", "lgtm"), "You may not answer gate `confirm`", "Nothing was changed.")
		wantIn(t, "mallory's command", c.chat("mallory", "/workflow reject "+id+" not mine"), "You may not answer gate `confirm`")
		out, code := c.run("workflow", "approve", "--user", "mallory", id)
		if code != 3 || !strings.Contains(out, "You may not answer gate `confirm`") {
			t.Errorf("bot workflow approve --user mallory = exit %d, want 3 (still paused):\n%s", code, out)
		}
		if n := countRunEvents(t, env, id, db.EventGateRefused); n != 4 {
			t.Errorf("%d refusals recorded, want 4", n)
		}
		wantIn(t, "an unclear reply", c.chat("bob", "ship it but not on friday"), "I could not tell whether that approves or rejects `confirm`",
			"it also says “not”", "[Approve with this note] /workflow approve "+id+" --reply ")
		wantIn(t, "bob's approval", c.chat("bob", "lgtm, changelog checked"), "👍 Approved by console:bob (1 of 2 approvals)")
		wantIn(t, "bob's second approval", c.chat("bob", "yes"), "You already approved gate `confirm`")

		out, code = c.run("workflow", "approve", "--user", "carol", id, "fine by me")
		if code != 0 {
			t.Fatalf("bot workflow approve --user carol = exit %d:\n%s", code, out)
		}
		wantIn(t, "carol's approval", out, "✅ Approved by console:bob and console:carol", "shipped v1 with notes [changelog checked\nfine by me]")
		out, _ = c.run("workflow", "status", id)
		wantIn(t, "status", out, "completed", "• gate `confirm`: 👍 approved by console:bob ", ": changelog checked", "• gate `confirm`: ✅ approved by console:carol ", ": fine by me")
	})
}

// TestTerminalGateTimesOut: a terminal left open at a gate sees the one reminder and the timeout.
func TestTerminalGateTimesOut(t *testing.T) {
	t.Parallel()
	botproc.ForEachEngine(t, botproc.Env, func(t *testing.T, env map[string]string) {
		c := newTerminal(t, env)
		input, typing := io.Pipe()
		p := botproc.Launch(t, c.env, input, "chat", "--conversation", "timed", "--user", "alice")
		if _, err := io.WriteString(typing, "/workflow run timed\n"); err != nil {
			t.Fatal(err)
		}
		p.WaitStdout(regexp.MustCompile(`it is rejected\.$`))
		p.WaitStdout(regexp.MustCompile("^⏰ Reminder: run `[0-9a-z]+` of `timed` is still waiting at `confirm`"))
		p.WaitStdout(regexp.MustCompile("timed out: nobody answered within 4s. The gate is rejected and the run is cancelled.$"))
		_ = typing.Close()
		p.Exit()
		out := p.Stdout()
		if n := strings.Count(out, "⏰ Reminder"); n != 1 {
			t.Errorf("%d reminders, want 1:\n%s", n, out)
		}
		if strings.Contains(out, "answered in time") {
			t.Errorf("the node after the timed-out gate ran:\n%s", out)
		}
	})
}

// TestTerminalObjectionRejectsTheRelease is the transcript of issue 12 with the bundled release
// workflow: an objection at the gate rejects the release with its words as the reason.
func TestTerminalObjectionRejectsTheRelease(t *testing.T) {
	t.Parallel()
	c := newTerminal(t, botproc.Env(t))
	out, code := c.run("chat", "/workflow run release v1.2.3")
	if code != 0 || !strings.Contains(out, "is waiting at `confirm`") {
		t.Fatalf("run release = exit %d:\n%s", code, out)
	}
	out, code = c.run("chat", "nah, fix the tests first")
	if code != 0 || !strings.Contains(out, "🛑 Rejected by console:local: gate `confirm` of run `") || !strings.Contains(out, "with reason: fix the tests first. The run is cancelled.") {
		t.Fatalf("the objection = exit %d:\n%s", code, out)
	}
	if strings.Contains(out, "shipped") {
		t.Fatalf("an objection shipped the release:\n%s", out)
	}
}
