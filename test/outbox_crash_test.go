package test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"threadflow/adapters/slack/slackfake"
	"threadflow/testkit"
	"threadflow/testkit/botproc"
)

// Issue 27: every message a run owes reaches its thread exactly once across a SIGKILL. Each case
// holds one post at the Slack fake, kills the bot there and starts it again on the same database:
// with the post held after Slack accepted it (the bot died before it heard so), the restarted bot
// finds it and does not post it again; held before (the bot died before its request got through),
// the restarted bot posts it. Either way the channel shows it once.

// needsAIWorkflow pauses at once: its provider's CLI is not installed (CLAUDE_BIN names nothing),
// a recovery pause that waits for a person.
const needsAIWorkflow = `name: needsai
description: Asks an AI whose CLI is not installed.
nodes:
  - id: think
    provider: claude
    prompt: "Say hello."
`

// crashCase is one owed message held at the platform while the bot is killed.
type crashCase struct {
	name     string
	command  string // the slash command that starts the run
	workflow string
	held     string                        // a part of the held message's text
	after    func(s *slackBot, r run) bool // the restarted bot got past the message
}

func crashCases() []crashCase {
	return []crashCase{
		{name: "announcement", command: "run gated v1", workflow: "gated", held: "▶ `gated` - run `"},
		{name: "gate question", command: "run gated v2", workflow: "gated", held: "is waiting at `gate`"},
		{name: "reminder", command: "run timed", workflow: "timed", held: "⏰ Reminder: run `"},
		{name: "final message", command: "run picky B", workflow: "picky", held: "✅ Run `"},
		{name: "pause notice", command: "run needsai", workflow: "needsai", held: "could not continue and is paused"},
	}
}

func TestOwedMessagesArePostedOnceAcrossAKill(t *testing.T) {
	t.Parallel()
	for _, c := range crashCases() {
		for _, posted := range []bool{true, false} {
			name := c.name + map[bool]string{true: " killed after Slack took it", false: " killed before it reached Slack"}[posted]
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				botproc.ForEachEngine(t, botproc.Env, func(t *testing.T, env map[string]string) {
					killedWhilePosting(t, env, c, posted)
				})
			})
		}
	}
}

func killedWhilePosting(t *testing.T, env map[string]string, c crashCase, posted bool) {
	dir := writeWorkflows(t)
	if err := os.WriteFile(filepath.Join(dir, "needsai.yaml"), []byte(needsAIWorkflow), 0o644); err != nil {
		t.Fatal(err)
	}
	s := startSlackBot(t, env, map[string]string{"LEASE_TTL": "1s", "CLAUDE_BIN": filepath.Join(env["HOME"], "no-such-claude"), "WORKFLOWS_DIR": dir})
	arrived, release := s.fake.HoldPost(c.held, posted)
	s.fake.SlashCommand(alice, channel, c.command)
	select {
	case <-arrived:
	case <-t.Context().Done():
		t.Fatal("the test ended before the held message was posted")
	}
	s.bot.Kill()
	release() // the killed bot's request ends; one held before it was posted is not posted
	s.bot = botproc.Start(t, env)
	s.fake.WaitFor(t, testkit.Deadline, func(f *slackfake.Server) bool { return f.Connected() })

	r := s.waitRoot(t, c.workflow, 1)
	s.waitInThread(t, r, "the run's end", func(m slackfake.Message) bool {
		return strings.HasPrefix(m.Text, "Status of run `"+r.id+"`: *") && (strings.Contains(m.Text, "*completed*") ||
			strings.Contains(m.Text, "*cancelled*") || strings.Contains(m.Text, "*paused*"))
	})
	if c.workflow == "gated" {
		s.waitInThread(t, r, "the gate question", containsText("is waiting at `gate`"))
	}
	// Every message the run owes is delivered: the restarted bot had its chance to post one twice.
	st := openStore(t, env)
	s.fake.WaitFor(t, testkit.Deadline, func(*slackfake.Server) bool {
		u, err := st.Undelivered(context.Background(), r.id)
		return err == nil && len(u) == 0
	})
	if n := countText(s.fake.Messages(channel), c.held); n != 1 {
		t.Errorf("%q is in the channel %d times, want once:\n%s", c.held, n, s.fake.Dump())
	}
	if n := countText(s.fake.Messages(channel), "▶ `"+c.workflow+"` - run `"); n != 1 {
		t.Errorf("%d announcements, want one:\n%s", n, s.fake.Dump())
	}
	if n := len(s.statusMessages(r)); n != 1 {
		t.Errorf("%d status messages, want one:\n%s", n, s.fake.Dump())
	}
}

// countText counts the messages that contain sub.
func countText(msgs []slackfake.Message, sub string) int {
	n := 0
	for _, m := range msgs {
		if strings.Contains(m.Text, sub) {
			n++
		}
	}
	return n
}
