package discord

import (
	"slices"
	"testing"

	"threadflow/adapters/discord/discordfake"
	"threadflow/conversation"
)

// Every way a person reaches the bot carries the name Discord shows for them: the guild nickname,
// else the global display name, else the username. In a DM there is no guild, so no nickname.
func TestMessagesCarryTheNameDiscordShows(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fake.SetProfile("401", discordfake.Profile{Username: "ann.lee", GlobalName: "Ann Lee", Nick: "Ann (ops)"})
	e.fake.SetProfile("402", discordfake.Profile{Username: "bob.k", GlobalName: "Bob K"})
	e.fake.SetProfile("403", discordfake.Profile{Username: "carol"})
	ref, err := e.adapter.Outbox().Post(t.Context(), conversation.Address{Platform: Platform, ChannelID: "500"}, conversation.Reply{
		Text: conversation.T(conversation.P("Approve?")), Buttons: []conversation.Button{{Label: "Approve", Command: "/workflow approve 7k2m9x4q1c"}},
	})
	if err != nil {
		t.Fatalf("Post: %v", err)
	}
	prompt := e.fake.BotMessages(ref.ChannelID)[0]
	people := []struct{ user, inGuild, inDM string }{
		{"401", "Ann (ops)", "Ann Lee"},
		{"402", "Bob K", "Bob K"},
		{"403", "carol", "carol"},
	}
	for _, p := range people {
		ways := []struct {
			name string
			send func() string
			want string
		}{
			{"mention", func() string { return e.fake.Mention(p.user, "500", "status") }, p.inGuild},
			{"slash command", func() string { return e.fake.SlashCommand(p.user, "500", "list", nil) }, p.inGuild},
			{"button", func() string { return e.fake.Click(p.user, prompt, "Approve") }, p.inGuild},
			{"direct message", func() string { return e.fake.DirectMessage(p.user, "status") }, p.inDM},
			{"slash command in a DM", func() string { return e.fake.SlashCommand(p.user, discordfake.DMChannel(p.user), "list", nil) }, p.inDM},
		}
		for _, w := range ways {
			got := e.rec.waitEvent(t, w.send()).msg
			if got.UserID != "discord:"+p.user || got.UserName != w.want {
				t.Errorf("%s by %s: user %q named %q, want %q", w.name, p.user, got.UserID, got.UserName, w.want)
			}
		}
	}
}

// Every way a member reaches the bot in a guild carries their roles as Discord sent them, through
// discordgo's decoding of the fake's member objects; a DM has no guild, so no roles.
func TestMessagesCarryTheMembersRoles(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.fake.SetProfile("401", discordfake.Profile{Username: "ann", Roles: []string{"701", "702"}})
	ref, err := e.adapter.Outbox().Post(t.Context(), conversation.Address{Platform: Platform, ChannelID: "500"}, conversation.Reply{
		Text: conversation.T(conversation.P("Approve?")), Buttons: []conversation.Button{{Label: "Approve", Command: "/workflow approve 7k2m9x4q1c"}},
	})
	if err != nil {
		t.Fatalf("Post: %v", err)
	}
	prompt := e.fake.BotMessages(ref.ChannelID)[0]
	for _, w := range []struct {
		name string
		send func() string
		want []string
	}{
		{"mention", func() string { return e.fake.Mention("401", "500", "status") }, []string{"701", "702"}},
		{"slash command", func() string { return e.fake.SlashCommand("401", "500", "list", nil) }, []string{"701", "702"}},
		{"button", func() string { return e.fake.Click("401", prompt, "Approve") }, []string{"701", "702"}},
		{"direct message", func() string { return e.fake.DirectMessage("401", "status") }, nil},
		{"member without roles", func() string { return e.fake.Mention("402", "500", "status") }, nil},
	} {
		if got := e.rec.waitEvent(t, w.send()).msg.Sender().Roles; !slices.Equal(got, w.want) {
			t.Errorf("%s: roles %q, want %q", w.name, got, w.want)
		}
	}
}
