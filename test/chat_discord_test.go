package test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"threadflow/adapters/discord/discordfake"
	"threadflow/commands"
	"threadflow/testkit"
	"threadflow/testkit/botproc"
)

// discordChat is the Discord fake as the chat suite's platform: the test channel of one bot.
type discordChat struct {
	*discordBot
	env          map[string]string
	channel      string
	interactions *interactionLog
}

// interactionLog keeps the interactions each person made, to read the answers only they saw.
type interactionLog struct {
	mu     sync.Mutex
	byUser map[string][]string
}

func (l *interactionLog) add(user, id string) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.byUser[user] = append(l.byUser[user], id)
	return id
}

func (l *interactionLog) of(user string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.byUser[user])
}

// discordUsers are the suite's people as Discord knows them.
var discordUsers = map[string]string{"alice": discordAlice, "bob": discordBob, "carol": discordCarol, "mallory": discordMallory}

func openDiscordChat(t *testing.T, env map[string]string) func(t *testing.T) chat {
	fake := discordfake.New(t)
	b := startDiscordBot(t, fake, env)
	// Announced once Discord answered with the bot's own user (issue 26).
	b.bot.WaitStdout(regexp.MustCompile(`^Discord on: @threadflow\.$`))
	var n atomic.Int32
	return func(*testing.T) chat {
		return discordChat{discordBot: b, env: env, channel: fmt.Sprintf("91000000000%07d", n.Add(1)),
			interactions: &interactionLog{byUser: map[string][]string{}}}
	}
}

// Send types a /workflow command: Discord sends it as an interaction of the command's subcommand
// with its options. Every command must be deferred in time, and its placeholder then show it.
func (d discordChat) Send(t *testing.T, user, text string) {
	t.Helper()
	in := d.command(t, user, text)
	checkDeferredInTime(t, d.fake, in, text)
}

// command sends text as the interaction Discord would make of it, and returns the interaction id.
func (d discordChat) command(t *testing.T, user, text string) string {
	t.Helper()
	c, err := commands.Parse(text)
	if err != nil {
		t.Fatalf("the suite sends %q, which does not parse: %v", text, err)
	}
	opts := map[string]any{}
	switch c.Kind {
	case commands.KindRun:
		opts["name"] = c.Workflow
		if len(c.Args) > 0 {
			opts["arguments"] = strings.Join(c.Args, " ")
		}
	default:
		t.Fatalf("the suite's Discord platform sends no %v command yet", c.Kind)
	}
	return d.interactions.add(user, d.fake.SlashCommand(discordUsers[user], d.channel, strings.Fields(text)[1], opts))
}

func (d discordChat) Reply(t *testing.T, user string, r chatRun, text string) {
	t.Helper()
	thread := threadOf(d.fake, r.Root.native.(discordfake.Message))
	if thread == "" {
		t.Fatalf("run %s has no thread to reply in", r.ID)
	}
	d.fake.ThreadMessage(discordUsers[user], thread, text)
}

// Click presses a button; Discord must be told at once that the message will be updated. Mallory,
// the one person the suite's gates refuse, is then told why in a followup only she sees.
func (d discordChat) Click(t *testing.T, user string, m chatMsg, label string) {
	t.Helper()
	in := d.interactions.add(user, d.fake.Click(discordUsers[user], m.native.(discordfake.Message), label))
	want := []string{discordfake.KindDeferredUpdate}
	if user == "mallory" {
		want = append(want, discordfake.KindFollowup)
	}
	d.fake.WaitFor(t, testkit.Deadline, func(f *discordfake.Server) bool { return len(f.InteractionResponses(in)) >= len(want) })
	if got := responseKinds(d.fake.InteractionResponses(in)); !slices.Equal(got, want) {
		t.Errorf("answers to %s's click on %s = %v, want %v", user, label, got, want)
	}
}

func (d discordChat) Conversation(t *testing.T) []chatMsg {
	return discordMsgs(d.fake.BotMessages(d.channel))
}

// Thread is r's thread, a channel of its own started on the announcement.
func (d discordChat) Thread(t *testing.T, r chatRun) []chatMsg {
	thread := threadOf(d.fake, r.Root.native.(discordfake.Message))
	if thread == "" {
		return nil
	}
	return discordMsgs(d.fake.BotMessages(thread))
}

// Private is what user's interactions were answered ephemerally: Discord has no other private
// message in a channel.
func (d discordChat) Private(t *testing.T, user string) []chatMsg {
	var out []chatMsg
	for _, in := range d.interactions.of(user) {
		for i, r := range d.fake.InteractionResponses(in) {
			if r.Ephemeral {
				out = append(out, chatMsg{ID: fmt.Sprintf("%s/%d", in, i), Text: r.Content, Visible: []string{r.Content}})
			}
		}
	}
	return out
}

func discordMsgs(ms []discordfake.Message) []chatMsg {
	out := make([]chatMsg, len(ms))
	for i, m := range ms {
		out[i] = chatMsg{ID: m.ID, Text: discordShown(m.Content), Visible: []string{m.Content}, Buttons: discordLabels(m), Edited: m.Edited, native: m}
	}
	return out
}

func (d discordChat) Lacks(gesture) string { return "" }

func (d discordChat) Words() chatWords {
	shown := map[string]string{"alice": aliceShown, "bob": bobShown, "carol": carolShown}
	return chatWords{Starter: aliceShown, Answerer: shown, Output: qualified("discord", discordUsers), Bold: "**", Ping: "@everyone", Pings: liveDiscordMention}
}

func (d discordChat) Stopped(t *testing.T, r chatRun) { stopped(t, d.bot, r.ID) }

func (d discordChat) Home() string { return d.env["HOME"] }

// SendTwice starts a second replica on the bot's PostgreSQL database, connected to the same
// gateway with the same token, so that both receive the interaction: exactly one must answer it.
// On SQLite two replicas cannot share a database, and the scenario says so.
func (d discordChat) SendTwice(t *testing.T, user, text string) func(t *testing.T) {
	t.Helper()
	if d.env["DATABASE_URL"] == "" {
		notApplicable(t, "Discord delivers an interaction twice only to two replicas, which share a PostgreSQL database, not a SQLite file")
	}
	env := botproc.Env(t)
	env["DATABASE_URL"] = d.env["DATABASE_URL"]
	replicas := []*discordBot{d.discordBot, startDiscordBot(t, d.fake, env)}
	if n := d.fake.Sessions(); n != 2 {
		t.Fatalf("%d gateway sessions, want one per replica", n)
	}
	in := d.command(t, user, text)
	return func(t *testing.T) {
		checkDeferredInTime(t, d.fake, in, text)
		// The other replica did receive the interaction and stood down.
		stoodDown := func(b *discordBot) bool {
			return slices.ContainsFunc(b.bot.LogEvents("discord.event_claimed_elsewhere"), func(rec map[string]any) bool {
				return botproc.HasFields(rec, map[string]string{"event": in})
			})
		}
		d.fake.WaitFor(t, testkit.Deadline, func(*discordfake.Server) bool { return stoodDown(replicas[0]) || stoodDown(replicas[1]) })
		if stoodDown(replicas[0]) && stoodDown(replicas[1]) {
			t.Error("both replicas stood down: nobody owned the interaction")
		}
		created := len(replicas[0].bot.LogEvents("orchestrator.run_created")) + len(replicas[1].bot.LogEvents("orchestrator.run_created"))
		if created != 1 {
			t.Errorf("the replicas created %d runs for one interaction, want 1", created)
		}
	}
}
