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

func TestSlackRunHelloWorld(t *testing.T) {
	t.Parallel()
	botproc.ForEachEngine(t, botproc.Env, func(t *testing.T, env map[string]string) {
		s := startSlackBot(t, env, nil)
		// Announced once auth.test accepted the token (issue 26).
		s.bot.WaitStdout(regexp.MustCompile(`^Slack on: @threadflow in Slackfake\.$`))
		envelope := s.fake.SlashCommand(alice, channel, "run hello world")

		r := s.waitRoot(t, "hello", 1)
		status := s.waitStatus(t, r, "completed")
		out := s.waitInThread(t, r, "the completion message", hasPrefix("✅ Run `"+r.id+"` of `hello` completed."))

		if !s.fake.Acked(envelope) {
			t.Error("the slash command envelope was not acked")
		}
		if want := "▶ `hello` - run `" + r.id + "` by " + slackName(alice); r.root.Text != want {
			t.Errorf("root message = %q, want %q", r.root.Text, want)
		}
		if n := len(s.roots()); n != 1 {
			t.Errorf("%d run announcements in the channel, want 1", n)
		}
		if got := s.statusMessages(r); len(got) != 1 || !status.Edited {
			t.Errorf("status messages = %d (edited %v), want one, edited in place", len(got), status.Edited)
		}
		if !strings.Contains(out.Text, "Hello, world!") {
			t.Errorf("completion message %q does not show the output Hello, world!", out.Text)
		}
	})
}

// gateAnswer is how a person answers the gate of the gated workflow.
type gateAnswer func(s *slackBot, r run, gate slackfake.Message)

func TestSlackGateAnswers(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name       string
		answer     gateAnswer
		wantStatus string
		wantGate   string // the gate message once answered
		wantOutput string // "" when the last node must not run
	}{
		{"Approve button", func(s *slackBot, _ run, gate slackfake.Message) { s.fake.Click(alice, gate, "Approve") },
			"completed", "✅ Approved by slack:" + alice, "finished after approved by slack:" + alice},
		{"lgtm typed in the thread", func(s *slackBot, r run, _ slackfake.Message) { s.fake.ThreadMessage(alice, channel, r.root.TS, "lgtm") },
			"completed", "✅ Approved by slack:" + alice, "finished after approved by slack:" + alice},
		{"no typed in the thread", func(s *slackBot, r run, _ slackfake.Message) { s.fake.ThreadMessage(alice, channel, r.root.TS, "no") },
			"cancelled", "🛑 Rejected by slack:" + alice, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			botproc.ForEachEngine(t, botproc.Env, func(t *testing.T, env map[string]string) {
				s := startSlackBot(t, env, nil)
				s.fake.SlashCommand(alice, channel, "run gated v1.2")
				r := s.waitRoot(t, "gated", 1)
				gate := waitGate(t, s, r)

				tt.answer(s, r, gate)
				s.waitStatus(t, r, tt.wantStatus)
				if tt.wantOutput != "" {
					s.waitInThread(t, r, "the completion message", containsText(tt.wantOutput))
				} else {
					s.waitInThread(t, r, "the cancellation notice", containsText("The run is cancelled."))
					for _, m := range s.thread(r.root.TS) {
						if strings.Contains(m.Text, "finished after") {
							t.Errorf("the node after a rejected gate ran: %q", m.Text)
						}
					}
				}
				answered := s.message(t, gate.TS)
				if !strings.HasPrefix(answered.Text, tt.wantGate) || len(answered.Buttons) != 0 {
					t.Errorf("answered gate message = %q with buttons %v; want it to start %q, without buttons",
						answered.Text, buttonLabels(answered), tt.wantGate)
				}
			})
		})
	}
}

// waitGate waits for r's gate message and checks what it offers.
func waitGate(t *testing.T, s *slackBot, r run) slackfake.Message {
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

// TestSlackFailedRunPrompt is seed 001: a fresh run must never silently resume an older failed
// run with its stale request. It prompts; the person's choice is then carried out exactly.
func TestSlackFailedRunPrompt(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		click  string
		before func(t *testing.T, s *slackBot)             // fixes the cause where the choice needs it
		check  func(t *testing.T, s *slackBot, failed run) // what the channel shows afterwards
	}{
		{"Start fresh runs the new arguments", "Start fresh", func(*testing.T, *slackBot) {}, checkStartedFresh},
		{"Resume continues the failed run", "Resume", func(t *testing.T, s *slackBot) { touch(t, filepath.Join(s.home, "ready")) }, checkResumed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			botproc.ForEachEngine(t, botproc.Env, func(t *testing.T, env map[string]string) {
				s := startSlackBot(t, env, nil)
				failed := failPicky(t, s)

				s.fake.SlashCommand(alice, channel, `run picky "B"`)
				prompt := s.waitMessage(t, "the failed-run prompt", hasPrefix("Nothing was started: run `"+failed.id+"`"))
				if prompt.ThreadTS != "" {
					t.Errorf("the prompt went to thread %s, want the channel where the command was typed", prompt.ThreadTS)
				}
				if got := buttonLabels(prompt); !slices.Equal(got, []string{"Resume", "Abandon", "Start fresh"}) {
					t.Fatalf("prompt buttons = %v, want [Resume Abandon Start fresh]", got)
				}
				for _, want := range []string{"*failed*", "It was started with: A", "/workflow run picky --force B"} {
					if !strings.Contains(prompt.Text, want) {
						t.Errorf("prompt %q does not contain %q", prompt.Text, want)
					}
				}
				if n := len(s.roots()); n != 1 {
					t.Fatalf("%d runs announced after the prompt, want only the failed one", n)
				}

				tt.before(t, s)
				s.fake.Click(alice, prompt, tt.click)
				tt.check(t, s, failed)
				// The clicked prompt shows the choice and offers no stale buttons.
				s.waitMessage(t, "the prompt settled", func(m slackfake.Message) bool {
					return m.TS == prompt.TS && m.Edited && len(m.Buttons) == 0
				})
			})
		})
	}
}

// failPicky runs picky with the input it fails on and waits for the failure report.
func failPicky(t *testing.T, s *slackBot) run {
	t.Helper()
	s.fake.SlashCommand(alice, channel, `run picky "A"`)
	r := s.waitRoot(t, "picky", 1)
	s.waitStatus(t, r, "failed")
	failure := s.waitInThread(t, r, "the failure message", hasPrefix("❌ Run `"+r.id+"` of `picky` failed at node `deploy`"))
	if got := buttonLabels(failure); !slices.Equal(got, []string{"Resume", "Abandon"}) {
		t.Errorf("failure buttons = %v, want [Resume Abandon]", got)
	}
	if !strings.Contains(failure.Text, "target for A is not ready") {
		t.Errorf("failure message %q does not say why", failure.Text)
	}
	s.waitStopped(t, r)
	return r
}

func checkStartedFresh(t *testing.T, s *slackBot, failed run) {
	t.Helper()
	fresh := s.waitRoot(t, "picky", 2)
	// Anywhere in the channel: where a run's report goes is TestSlackRunReportStaysInItsThread's.
	s.waitMessage(t, "the fresh run's output", containsText("✅ Run `"+fresh.id+"` of `picky` completed.\ndeployed B"))
	s.waitMessage(t, "the prompt settled", hasPrefix("Started a fresh run `"+fresh.id+"` for slack:"+alice))
	if fresh.id == failed.id {
		t.Fatalf("Start fresh reused run %s", failed.id)
	}
	if st := s.statusMessages(failed); len(st) != 1 || !strings.Contains(st[0].Text, "*failed*") {
		t.Errorf("the failed run's status = %v; a fresh run must leave it failed", st)
	}
	if got := readFile(t, filepath.Join(s.home, "prepared")); got != "A\nB\n" {
		t.Errorf("prepare ran with %q, want A then B", got)
	}
}

func checkResumed(t *testing.T, s *slackBot, failed run) {
	t.Helper()
	s.waitInThread(t, failed, "the resumed run's completion", hasPrefix("✅ Run `"+failed.id+"` of `picky` completed."))
	done := s.waitInThread(t, failed, "the resumed run's output", containsText("deployed A"))
	if strings.Contains(done.Text, "deployed B") {
		t.Errorf("the resumed run used the new arguments: %q", done.Text)
	}
	if n := len(s.roots()); n != 1 {
		t.Errorf("%d runs announced, want only the resumed one", n)
	}
	if got := readFile(t, filepath.Join(s.home, "prepared")); got != "A\n" {
		t.Errorf("prepare ran with %q; a resume must continue at the failed node, not restart", got)
	}
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
	failed := failPicky(t, s)
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

func TestSlackRedeliveredCommandRunsOnce(t *testing.T) {
	t.Parallel()
	botproc.ForEachEngine(t, botproc.Env, func(t *testing.T, env map[string]string) {
		s := startSlackBot(t, env, nil)
		envelope := s.fake.SlashCommand(alice, channel, "run hello redelivered")
		s.fake.Redeliver(envelope)
		s.fake.Redeliver(envelope)
		// Envelopes of one channel are handled in order: once this later command is answered, the
		// redeliveries have been handled too.
		s.fake.SlashCommand(alice, channel, "list")
		s.waitMessage(t, "the list reply", hasPrefix("*Workflows*"))

		r := s.waitRoot(t, "hello", 1)
		s.waitInThread(t, r, "the completion message", containsText("Hello, redelivered!"))
		if n := len(s.roots()); n != 1 {
			t.Errorf("%d runs announced for one command delivered three times, want 1", n)
		}
		if n := len(s.statusMessages(r)); n != 1 {
			t.Errorf("%d status messages, want 1", n)
		}
		// The redeliveries did reach the bot, which recognised them: the test is not vacuous.
		if n := len(s.bot.LogEvents("conversation.inbound_duplicate")); n != 2 {
			t.Errorf("the bot logged %d duplicate deliveries, want 2", n)
		}
	})
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
	gate := waitGate(t, s, r)

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
