package test

import (
	"fmt"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"threadflow/adapters/slack/slackfake"
	"threadflow/testkit"
)

// slackChat is the Slack fake as the chat suite's platform: a channel of its own with one bot.
type slackChat struct {
	*slackBot
	channel string
}

// slackUsers are the suite's people as Slack knows them.
var slackUsers = map[string]string{"alice": alice, "bob": bob, "carol": carol, "mallory": mallory}

func openSlackChat(t *testing.T, env map[string]string) func(t *testing.T) chat {
	s := startSlackBot(t, env, nil)
	// Announced once auth.test accepted the token (issue 26).
	s.bot.WaitStdout(regexp.MustCompile(`^Slack on: @threadflow in Slackfake\.$`))
	var n atomic.Int32
	return func(*testing.T) chat { return slackChat{s, fmt.Sprintf("C0SUITE%02d", n.Add(1))} }
}

// Send types a /workflow command (Slack hands its text without the command's name). Its envelope
// must be acked.
func (s slackChat) Send(t *testing.T, user, text string) {
	t.Helper()
	cmd, ok := strings.CutPrefix(text, "/workflow ")
	if !ok {
		t.Fatalf("the suite talks to the bot in a Slack channel with commands only, not %q", text)
	}
	envelope := s.fake.SlashCommand(slackUsers[user], s.channel, cmd)
	s.fake.WaitFor(t, testkit.Deadline, func(f *slackfake.Server) bool { return f.Acked(envelope) })
}

func (s slackChat) Reply(t *testing.T, user string, r chatRun, text string) {
	s.fake.ThreadMessage(slackUsers[user], s.channel, r.Root.ID, text)
}

func (s slackChat) Click(t *testing.T, user string, m chatMsg, label string) {
	s.fake.Click(slackUsers[user], m.native.(slackfake.Message), label)
}

func (s slackChat) Conversation(t *testing.T) []chatMsg { return s.messages(t, "") }

func (s slackChat) Thread(t *testing.T, r chatRun) []chatMsg { return s.messages(t, r.Root.ID) }

// messages are the messages of the channel in thread (of the channel itself for "").
func (s slackChat) messages(t *testing.T, thread string) []chatMsg {
	var out []chatMsg
	for _, m := range s.fake.Messages(s.channel) {
		if m.ThreadTS == thread {
			out = append(out, slackMsg(t, m))
		}
	}
	return out
}

func (s slackChat) Private(t *testing.T, user string) []chatMsg {
	var out []chatMsg
	for _, m := range s.fake.Ephemerals(slackUsers[user]) {
		out = append(out, slackMsg(t, m))
	}
	return out
}

func slackMsg(t *testing.T, m slackfake.Message) chatMsg {
	return chatMsg{ID: m.TS, Text: m.Text, Visible: visibleTexts(t, m), Buttons: buttonLabels(m), Edited: m.Edited, native: m}
}

func (s slackChat) Lacks(gesture) string { return "" }

func (s slackChat) Words() chatWords {
	return chatWords{Starter: slackName(alice), Answerer: qualified("slack", slackUsers), Output: qualified("slack", slackUsers),
		Bold: "*", Ping: "<!channel>", Pings: liveMention}
}

func (s slackChat) Stopped(t *testing.T, r chatRun) { stopped(t, s.bot, r.ID) }

func (s slackChat) Home() string { return s.home }

// SendTwice sends a command and has Slack deliver its envelope twice more, as it does when an ack
// is late.
func (s slackChat) SendTwice(t *testing.T, user, text string) func(t *testing.T) {
	cmd, _ := strings.CutPrefix(text, "/workflow ")
	envelope := s.fake.SlashCommand(slackUsers[user], s.channel, cmd)
	s.fake.Redeliver(envelope)
	s.fake.Redeliver(envelope)
	// Envelopes of one channel are handled in order: once this later command is answered, the
	// redeliveries have been handled too.
	s.fake.SlashCommand(slackUsers[user], s.channel, "list")
	return func(t *testing.T) {
		waitMsg(t, "the list reply", func() []chatMsg { return s.Conversation(t) }, textPrefix("*Workflows*"))
		// The redeliveries did reach the bot, which recognised them.
		if n := len(s.bot.LogEvents("conversation.inbound_duplicate")); n != 2 {
			t.Errorf("the bot logged %d duplicate deliveries, want 2", n)
		}
	}
}
