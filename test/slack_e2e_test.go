package test

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"threadflow/adapters/slack/slackfake"
	"threadflow/testkit"
	"threadflow/testkit/botproc"
)

// slackFoldLimit is where Slack folds a message behind "show more"; every message the bot posts
// must fit below it to be read in one piece.
const slackFoldLimit = 4000

// waitSlackGate waits for r's gate message and checks what it offers.
func waitSlackGate(t *testing.T, s *slackBot, r run) slackfake.Message {
	t.Helper()
	gate := s.waitInThread(t, r, "the gate message", hasPrefix("⏸ Run `"+r.id+"` is waiting at `gate`."))
	if got := buttonLabels(gate); !slices.Equal(got, []string{"Approve", "Reject"}) {
		t.Fatalf("gate buttons = %v, want [Approve Reject]", got)
	}
	if !strings.Contains(gate.Text, "Ship v1.2?") {
		t.Errorf("gate message %q does not show the approval message", gate.Text)
	}
	s.waitStatus(t, r, "paused")
	s.waitStopped(t, r)
	return gate
}

// TestSlackRunReportStaysInItsThread: in a channel where the bot has just posted (so Slack's pacing
// makes announcing a run take a while), the run's report still goes to its thread and its status
// message is kept up to date.
func TestSlackRunReportStaysInItsThread(t *testing.T) {
	t.Parallel()
	s := startSlackBot(t, botproc.Env(t), nil)
	for range 3 {
		s.fake.SlashCommand(alice, channel, "list")
	}
	s.fake.SlashCommand(alice, channel, "run hello busy")
	r := s.waitRoot(t, "hello", 1)
	done := s.waitMessage(t, "the completion message", hasPrefix("✅ Run `"+r.id+"` of `hello` completed."))
	if done.ThreadTS != r.root.TS {
		t.Errorf("the completion message went to %q, want the run's thread %s", done.ThreadTS, r.root.TS)
	}
	s.waitStatus(t, r, "completed")
}

// TestSlackResumedRunStatusIsLive: after a failed run is resumed and completes, its thread does not
// end claiming that it failed: the newest status message shows the run completed.
func TestSlackResumedRunStatusIsLive(t *testing.T) {
	t.Parallel()
	s := startSlackBot(t, botproc.Env(t), nil)
	f := failPicky(t, slackChat{s, channel})
	failed := run{id: f.ID, root: f.Root.native.(slackfake.Message)}
	touch(t, filepath.Join(s.home, "ready"))
	s.fake.ThreadMessage(alice, channel, failed.root.TS, "/workflow resume "+failed.id)
	s.waitInThread(t, failed, "the resumed run's completion", hasPrefix("✅ Run `"+failed.id+"` of `picky` completed."))
	s.waitStatus(t, failed, "completed")
	if st := s.statusMessages(failed); !strings.Contains(st[len(st)-1].Text, "*completed*") {
		t.Errorf("the resumed run's status messages = %q; want the newest to show completed", texts(st))
	}
	var resuming []string
	for _, m := range s.thread(failed.root.TS) {
		if strings.HasPrefix(m.Text, "Resuming run") {
			resuming = append(resuming, m.Text)
		}
	}
	if len(resuming) != 1 {
		t.Errorf("the thread says %q; want the resume acknowledged once", resuming)
	}
}

// TestSlackGateAnsweredWhilePausing: a person who answers as soon as the status says paused, while
// the bot is still posting the gate message, gets the run continued at once, and the gate message
// does not offer buttons for a gate already answered.
func TestSlackGateAnsweredWhilePausing(t *testing.T) {
	t.Parallel()
	s := startSlackBot(t, botproc.Env(t), nil)
	s.fake.SlashCommand(alice, channel, "run gated v1.2")
	r := s.waitRoot(t, "gated", 1)
	s.waitStatus(t, r, "paused")
	s.fake.ThreadMessage(alice, channel, r.root.TS, "lgtm")

	s.waitInThread(t, r, "the completion message", containsText("finished after approved by slack:"+alice))
	s.bot.WaitLog("orchestrator.run_stopped", map[string]string{"run_id": r.id})
	for _, m := range s.thread(r.root.TS) {
		if len(m.Buttons) > 0 {
			t.Errorf("after the run completed, %q still offers %v", m.Text, buttonLabels(m))
		}
	}
}

func TestSlackLongOutputIsSplit(t *testing.T) {
	t.Parallel()
	s := startSlackBot(t, botproc.Env(t), nil)
	s.fake.SlashCommand(alice, channel, "run long")
	r := s.waitRoot(t, "long", 1)
	s.waitStatus(t, r, "completed")
	s.waitInThread(t, r, "the end of the report", containsText("Report end"))

	var parts []slackfake.Message
	for _, m := range s.thread(r.root.TS) {
		if !strings.HasPrefix(m.Text, "Status of run") {
			parts = append(parts, m)
		}
	}
	if len(parts) < 3 || !strings.HasPrefix(parts[0].Text, "✅ Run `"+r.id+"`") {
		t.Fatalf("the report arrived as %d messages starting %q; want at least 3, the first the completion message",
			len(parts), texts(parts[:min(1, len(parts))]))
	}
	all := ""
	for i, m := range parts {
		if len(m.Text) > slackFoldLimit {
			t.Errorf("message %d is %d characters, over Slack's %d", i, len(m.Text), slackFoldLimit)
		}
		if n := strings.Count(m.Text, "```"); n%2 != 0 {
			t.Errorf("message %d has %d fence marks; each message must open and close its own code block:\n%s", i, n, m.Text)
		}
		all += m.Text + "\n"
	}
	for i := 1; i <= 123; i++ {
		if n := strings.Count(all, fmt.Sprintf("line %03d ", i)); n != 1 {
			t.Errorf("line %03d appears %d times in the report, want once", i, n)
		}
	}
}

// liveMention is any Slack control sequence that notifies people or links a conversation:
// <!channel>, <!here>, <!everyone>, <!subteam^...>, <@U...>, <#C...>.
var liveMention = regexp.MustCompile(`<[!@#]`)

func TestSlackMentionsInUserTextAreEscaped(t *testing.T) {
	t.Parallel()
	const pings = "<!channel> <@U999> <!here> <!subteam^S123> <#C999>"
	s := startSlackBot(t, botproc.Env(t), nil)

	s.fake.SlashCommand(alice, channel, "run hello "+pings)
	hello := s.waitRoot(t, "hello", 1)
	s.waitInThread(t, hello, "the greeting", containsText("Hello, &lt;!channel&gt; &lt;@U999&gt;"))

	s.fake.SlashCommand(alice, channel, "run broken "+pings)
	s.waitRoot(t, "broken", 1)
	s.waitMessage(t, "the failure message", containsText("cannot handle &lt;!channel&gt;"))
	// The previous request reaches the prompt's preview.
	s.fake.SlashCommand(alice, channel, "run broken again")
	s.waitMessage(t, "the prompt quoting the previous request", containsText("It was started with: &lt;!channel&gt; &lt;@U999&gt;"))

	messages := s.fake.Messages(channel)
	messages = append(messages, s.fake.Ephemerals(alice)...)
	for _, m := range messages {
		for _, text := range visibleTexts(t, m) {
			if liveMention.MatchString(text) {
				t.Errorf("message %s would ping or link: %q", m.TS, text)
			}
		}
	}
}

func TestSlackUserOutsideAllowListCannotApprove(t *testing.T) {
	t.Parallel()
	s := startSlackBot(t, botproc.Env(t), map[string]string{"ALLOWED_USER_IDS": "slack:" + alice})
	s.fake.SlashCommand(alice, channel, "run gated v1.2")
	r := s.waitRoot(t, "gated", 1)
	gate := waitSlackGate(t, s, r)

	s.fake.Click(mallory, gate, "Approve")
	s.fake.WaitFor(t, testkit.Deadline, func(f *slackfake.Server) bool { return len(f.Ephemerals(mallory)) > 0 })
	told := s.fake.Ephemerals(mallory)
	if len(told) != 1 || !strings.Contains(told[0].Text, "not allowed") || !strings.Contains(told[0].Text, "Nothing was changed") {
		t.Errorf("mallory was told %q; want one private message saying they are not allowed and nothing changed", texts(told))
	}
	if now := s.message(t, gate.TS); now.Edited || len(now.Buttons) != 2 {
		t.Errorf("gate message after mallory's click = %q (edited %v, buttons %v); want it unchanged",
			now.Text, now.Edited, buttonLabels(now))
	}
	if st := s.statusMessages(r); len(st) != 1 || !strings.Contains(st[0].Text, "*paused*") {
		t.Errorf("status after mallory's click = %q; want the run still paused", texts(st))
	}

	// The gate is still open for someone allowed.
	s.fake.Click(alice, gate, "Approve")
	s.waitInThread(t, r, "the completion message", containsText("finished after approved by slack:"+alice))
}

func TestSlackReconnectsAfterDroppedConnection(t *testing.T) {
	t.Parallel()
	s := startSlackBot(t, botproc.Env(t), nil)
	s.fake.DropConnection()
	// Sent while the bot is disconnected: Slack keeps it until the bot is back.
	s.fake.SlashCommand(alice, channel, "run hello while-away")
	s.fake.WaitFor(t, testkit.Deadline, func(f *slackfake.Server) bool { return f.Connected() && f.Connections() == 2 })
	first := s.waitRoot(t, "hello", 1)
	s.waitInThread(t, first, "the first run's output", containsText("Hello, while-away!"))

	s.fake.SlashCommand(alice, channel, "run hello again")
	second := s.waitRoot(t, "hello", 2)
	s.waitMessage(t, "the second run's output", containsText("✅ Run `"+second.id+"` of `hello` completed.\ngreet said: Hello, again!"))
}

func touch(t *testing.T, path string) {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func texts(ms []slackfake.Message) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Text
	}
	return out
}
