package test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"threadflow/adapters/discord/discordfake"
	"threadflow/testkit"
	"threadflow/testkit/botproc"
)

// TestDiscordAutocomplete: while a person types, workflow names and the channel's run ids are
// suggested, within the same callback deadline as any interaction.
func TestDiscordAutocomplete(t *testing.T) {
	fake := discordfake.New(t)
	startDiscordBot(t, fake, botproc.Env(t))
	r := startDiscordRun(t, fake, "picky", "A")
	waitDiscordStatus(t, fake, r, "failed")

	tests := []struct {
		name, sub, option, typed, want string
	}{
		{"workflow name", "run", "name", "pi", "picky"},
		{"run id of the channel", "resume", "id", r.id[:2], r.id},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := fake.Autocomplete(discordAlice, discordChannel, tt.sub, tt.option, tt.typed)
			fake.WaitFor(t, testkit.Deadline, func(f *discordfake.Server) bool { return len(f.InteractionResponses(in)) > 0 })
			rs := fake.InteractionResponses(in)
			if len(rs) != 1 || rs[0].Kind != discordfake.KindAutocomplete {
				t.Fatalf("answers = %v, want one list of choices", responseKinds(rs))
			}
			var values []string
			for _, c := range rs[0].Choices {
				values = append(values, c.Value)
			}
			if !slices.Contains(values, tt.want) {
				t.Errorf("typing %q in %s suggested %v, want %q among them", tt.typed, tt.option, values, tt.want)
			}
		})
	}
}

// TestDiscordSendRetriedAfterServerError: messages that Discord answers with a server error are
// sent again, so the run is still announced once and reports in its thread.
func TestDiscordSendRetriedAfterServerError(t *testing.T) {
	fake := discordfake.New(t)
	b := startDiscordBot(t, fake, botproc.Env(t))
	fake.FailNextSends(2)
	runWorkflow(fake, "hello", "again")

	r := waitDiscordRun(t, fake, "hello", 1)
	waitInRunThread(t, fake, r, "the completion message", contentHas("Hello, again!"))
	if n := len(discordRoots(fake)); n != 1 {
		t.Errorf("%d run announcements after retried sends, want 1", n)
	}
	failed := b.bot.LogEvents("discord.send_failed")
	if len(failed) != 2 {
		t.Fatalf("the bot logged %d failed sends, want the 2 injected", len(failed))
	}
	for _, rec := range failed {
		// Both failures were the announcement: its text must not reach the log.
		if strings.Contains(fmt.Sprint(rec), "▶") || rec["channel"] != discordChannel {
			t.Errorf("failed send logged as %v; want the channel %s and no message text", rec, discordChannel)
		}
	}
}

// TestDiscordArgumentsReachTheWorkflowAsTyped: the arguments option is free text. An apostrophe
// (straight or typographic, as phones type it) or a backslash is part of what the person means,
// not a quote or escape of a command line they never typed. (The path avoids \a, \n and the like:
// hello prints with sh's echo, which would turn those into control characters.)
func TestDiscordArgumentsReachTheWorkflowAsTyped(t *testing.T) {
	fake := discordfake.New(t)
	startDiscordBot(t, fake, botproc.Env(t))
	for i, args := range []string{`the user's login`, "the user’s login", `C:\Work\Repo`, `fix "the bug" now`} {
		before := len(fake.BotMessages(discordChannel))
		runWorkflow(fake, "hello", args)
		want := "Hello, " + args + "!"
		if strings.Contains(args, `"`) {
			want = "Hello, fix the bug now!" // quotes typed in pairs group words, as in a typed command
		}
		// The bot's first word in the channel is the run's announcement, or why it started none.
		fake.WaitFor(t, testkit.Deadline, func(f *discordfake.Server) bool { return len(f.BotMessages(discordChannel)) > before })
		if n := len(discordRoots(fake)); n != i+1 {
			t.Fatalf("arguments %q started no run; the bot answered %q", args, latestContent(fake.BotMessages(discordChannel)))
		}
		r := waitDiscordRun(t, fake, "hello", i+1)
		done := waitInRunThread(t, fake, r, "the completion message", contentPrefix("✅ Run `"+r.id+"` of `hello` completed."))
		if !strings.Contains(done.Content, want) {
			t.Errorf("arguments %q: the run printed %q, want %q", args, done.Content, want)
		}
	}
}
