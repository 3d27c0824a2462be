package test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"threadflow/adapters/discord/discordfake"
	"threadflow/adapters/slack/slackfake"
	"threadflow/testkit"
	"threadflow/testkit/botproc"
)

// Issue 27: every message a run owes reaches its thread exactly once across a SIGKILL. Each case
// holds one post at the platform's fake (Slack and Discord), kills the bot there and starts it
// again on the same database: with the post held after the platform accepted it (the bot died
// before it heard so), the restarted bot finds it and does not post it again; held before (the bot
// died before its request got through), the restarted bot posts it. Either way the channel shows
// it once.

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
	for _, p := range crashPlatforms() {
		for _, c := range crashCases() {
			for _, posted := range []bool{true, false} {
				name := p.name + "/" + c.name + map[bool]string{true: " killed after " + p.name + " took it", false: " killed before it reached " + p.name}[posted]
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					botproc.ForEachEngine(t, botproc.Env, func(t *testing.T, env map[string]string) {
						killedWhilePosting(t, env, p.start, c, posted)
					})
				})
			}
		}
	}
}

// crashChat is one platform's side of the crash test: its fake and the bot connected to it.
type crashChat interface {
	// holdPost holds the next post whose text contains sub, see slackfake's HoldPost.
	holdPost(sub string, posted bool) (arrived <-chan struct{}, release func())
	command(text string) // alice types "/workflow text" in the test channel
	kill()
	restart(t *testing.T) // starts the bot again on the same settings and waits until it is connected
	// waitRun waits for the announcement of a run of workflowName and returns the run's id.
	waitRun(t *testing.T, workflowName string) string
	// waitInRun waits for a message in the thread of the run waitRun returned.
	waitInRun(t *testing.T, what string, match func(text string) bool)
	count(sub string) int // the bot's messages, in the channel and its threads, that contain sub
	statusMessages() int  // the status messages in the run's thread; a run has one
	dump() string         // every message, for a failure
}

// crashPlatform starts the bot with env connected to a fresh fake of one platform, with the
// platform's workflows and needsai.
type crashPlatform struct {
	name  string
	start func(t *testing.T, env map[string]string) crashChat
}

func crashPlatforms() []crashPlatform {
	return []crashPlatform{
		{"Slack", func(t *testing.T, env map[string]string) crashChat {
			dir := withNeedsAI(t, writeWorkflows(t))
			return &slackCrash{slackBot: startSlackBot(t, env, map[string]string{"WORKFLOWS_DIR": dir}), env: env}
		}},
		{"Discord", func(t *testing.T, env map[string]string) crashChat {
			dir := withNeedsAI(t, writeDiscordWorkflows(t))
			return &discordCrash{discordBot: startDiscordBotIn(t, discordfake.New(t), env, dir), env: env}
		}},
	}
}

// withNeedsAI adds needsai to the workflows of dir.
func withNeedsAI(t *testing.T, dir string) string {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "needsai.yaml"), []byte(needsAIWorkflow), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

func killedWhilePosting(t *testing.T, env map[string]string, start func(*testing.T, map[string]string) crashChat, c crashCase, posted bool) {
	env["LEASE_TTL"] = "1s"
	env["CLAUDE_BIN"] = filepath.Join(env["HOME"], "no-such-claude")
	chat := start(t, env)
	arrived, release := chat.holdPost(c.held, posted)
	chat.command(c.command)
	select {
	case <-arrived:
	case <-t.Context().Done():
		t.Fatal("the test ended before the held message was posted")
	}
	chat.kill()
	release() // the killed bot's request ends; one held before it was posted is not posted
	chat.restart(t)

	id := chat.waitRun(t, c.workflow)
	chat.waitInRun(t, "the run's end", func(text string) bool {
		return strings.HasPrefix(text, "Status of run `"+id+"`: *") && (strings.Contains(text, "*completed*") ||
			strings.Contains(text, "*cancelled*") || strings.Contains(text, "*paused*"))
	})
	if c.workflow == "gated" {
		chat.waitInRun(t, "the gate question", func(text string) bool { return strings.Contains(text, "is waiting at `gate`") })
	}
	// Every message the run owes is delivered: the restarted bot had its chance to post one twice.
	st := openStore(t, env)
	testkit.Eventually(t, "every owed message delivered", func() bool {
		u, err := st.Undelivered(context.Background(), id)
		return err == nil && len(u) == 0
	})
	if n := chat.count(c.held); n != 1 {
		t.Errorf("%q is in the channel %d times, want once:\n%s", c.held, n, chat.dump())
	}
	if n := chat.count("▶ `" + c.workflow + "` - run `"); n != 1 {
		t.Errorf("%d announcements, want one:\n%s", n, chat.dump())
	}
	if n := chat.statusMessages(); n != 1 {
		t.Errorf("%d status messages, want one:\n%s", n, chat.dump())
	}
}

// slackCrash is the crash test's Slack.
type slackCrash struct {
	*slackBot
	env map[string]string
	r   run
}

func (s *slackCrash) holdPost(sub string, posted bool) (<-chan struct{}, func()) {
	return s.fake.HoldPost(sub, posted)
}
func (s *slackCrash) command(text string) { s.fake.SlashCommand(alice, channel, text) }
func (s *slackCrash) kill()               { s.bot.Kill() }
func (s *slackCrash) restart(t *testing.T) {
	s.bot = botproc.Start(t, s.env)
	s.fake.WaitFor(t, testkit.Deadline, func(f *slackfake.Server) bool { return f.Connected() })
}
func (s *slackCrash) waitRun(t *testing.T, workflowName string) string {
	s.r = s.waitRoot(t, workflowName, 1)
	return s.r.id
}
func (s *slackCrash) waitInRun(t *testing.T, what string, match func(string) bool) {
	t.Helper()
	s.waitInThread(t, s.r, what, func(m slackfake.Message) bool { return match(m.Text) })
}
func (s *slackCrash) count(sub string) int { return countText(s.fake.Messages(channel), sub) }
func (s *slackCrash) statusMessages() int  { return len(s.slackBot.statusMessages(s.r)) }
func (s *slackCrash) dump() string         { return s.fake.Dump() }

// discordCrash is the crash test's Discord.
type discordCrash struct {
	*discordBot
	env map[string]string
	r   discordRun
}

func (d *discordCrash) holdPost(sub string, posted bool) (<-chan struct{}, func()) {
	return d.fake.HoldPost(sub, posted)
}
func (d *discordCrash) command(text string) {
	_, rest, _ := strings.Cut(text, "run ")
	name, args, _ := strings.Cut(rest, " ")
	runWorkflow(d.fake, name, args)
}
func (d *discordCrash) kill() { d.bot.Kill() }
func (d *discordCrash) restart(t *testing.T) {
	// The killed bot's gateway session closes first, so the new one is the one counted.
	d.fake.WaitFor(t, testkit.Deadline, func(f *discordfake.Server) bool { return f.Sessions() == 0 })
	d.discordBot = startDiscordBotIn(t, d.fake, d.env, d.env["WORKFLOWS_DIR"])
}
func (d *discordCrash) waitRun(t *testing.T, workflowName string) string {
	d.r = waitDiscordRun(t, d.fake, workflowName, 1)
	return d.r.id
}
func (d *discordCrash) waitInRun(t *testing.T, what string, match func(string) bool) {
	t.Helper()
	waitInRunThread(t, d.fake, d.r, what, func(m discordfake.Message) bool { return match(m.Content) })
}
func (d *discordCrash) count(sub string) int {
	n := 0
	for _, ch := range append([]string{discordChannel}, threadIDs(d.fake)...) {
		for _, m := range d.fake.BotMessages(ch) {
			if strings.Contains(m.Content, sub) {
				n++
			}
		}
	}
	return n
}
func (d *discordCrash) statusMessages() int {
	n := 0
	for _, m := range d.fake.BotMessages(d.r.thread) {
		if strings.HasPrefix(m.Content, "Status of run `"+d.r.id+"`") {
			n++
		}
	}
	return n
}
func (d *discordCrash) dump() string { return d.fake.Dump() }

// threadIDs are the ids of the fake's threads.
func threadIDs(f *discordfake.Server) []string {
	var out []string
	for _, th := range f.Threads() {
		out = append(out, th.ID)
	}
	return out
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
