package test

import (
	"strings"
	"testing"

	"threadflow/adapters/discord/discordfake"
	"threadflow/testkit/botproc"
)

// TestDiscordNamesPeopleAsDiscordShowsThem: run messages and the run's thread name show who started
// a run and who answered its gate by the names Discord shows, never as bare ids. A name is the
// person's own text: it cannot ping, mention, format or break a line. The requester's name is stored
// with the run, so a restarted bot (or another replica) still names them.
func TestDiscordNamesPeopleAsDiscordShowsThem(t *testing.T) {
	const malloryShown = "@\u200beveryone <\u200b@" + discordAlice + "\\> \\*\\*boss\\*\\* second line"
	fake := discordfake.New(t)
	b := startDiscordBot(t, fake, botproc.Env(t))
	fake.SlashCommand(discordMallory, discordChannel, "run", map[string]any{"name": "asked", "arguments": "v1.2"})
	r := waitDiscordRun(t, fake, "asked", 1)
	if want := "▶ `asked` - run `" + r.id + "` by " + malloryShown; r.root.Content != want {
		t.Errorf("root message = %q, want %q", r.root.Content, want)
	}
	for _, th := range fake.Threads() {
		if th.ID == r.thread && th.Name != "▶ asked - run "+r.id+" by @everyone <@"+discordAlice+"> **boss** second line" {
			t.Errorf("thread name = %q, want the run and its requester's name on one line", th.Name)
		}
	}
	waitDiscordGate(t, b, r)
	restartDiscordBot(t, b)

	gate := waitInRunThread(t, fake, r, "the gate message", contentPrefix("⏸ Run `"+r.id+"`"))
	fake.Click(discordBob, gate, "Approve")
	waitDiscordStatus(t, fake, r, "completed")
	if now := discordMessage(t, fake, gate); !strings.HasPrefix(now.Content, "✅ Approved by "+bobShown+":") {
		t.Errorf("answered gate message = %q, want it to name %s", now.Content, bobShown)
	}
	fake.SlashCommand(discordAlice, discordChannel, "status", map[string]any{"id": r.id})
	status := waitDiscordMessage(t, fake, discordChannel, "the run's status", contentPrefix("Run `"+r.id+"` of `asked`"))
	for _, want := range []string{" ago by " + malloryShown + "\n", "✅ approved by " + bobShown + " "} {
		if !strings.Contains(status.Content, want) {
			t.Errorf("status lacks %q:\n%s", want, status.Content)
		}
	}

	for _, m := range append(fake.BotMessages(discordChannel), fake.BotMessages(r.thread)...) {
		if liveDiscordMention.MatchString(m.Content) || !m.AllowedMentionsNone {
			t.Errorf("message %s could ping (allowed mentions none: %v): %q", m.ID, m.AllowedMentionsNone, m.Content)
		}
		if strings.Contains(m.Content, discordMallory) || strings.Contains(m.Content, discordBob) {
			t.Errorf("message %s names someone by id: %q", m.ID, m.Content)
		}
	}
}
