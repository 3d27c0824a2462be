package test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"threadflow/adapters/discord/discordfake"
	"threadflow/testkit"
	"threadflow/testkit/botproc"
)

// checkDeferredInTime checks that a slash command was deferred once, within Discord's callback
// deadline, and that the "thinking" placeholder was then replaced by the command that ran. An
// answer meant only for the person (a refusal) is an ephemeral followup besides, and is left out.
func checkDeferredInTime(t *testing.T, fake *discordfake.Server, in, command string) {
	t.Helper()
	fake.WaitFor(t, testkit.Deadline, func(f *discordfake.Server) bool { return len(f.InteractionResponses(in)) > 0 })
	first := fake.InteractionResponses(in)[0]
	if first.Kind != discordfake.KindDeferred {
		t.Fatalf("the first answer to the slash command was %s, want a deferral (expired means it came after Discord's %v)",
			first.Kind, discordfake.CallbackDeadline)
	}
	// The fake refuses a late callback, so this holds whenever the deferral was accepted; it is
	// checked here so a change to the fake cannot hide a slow acknowledgement.
	if late := first.At.Sub(fake.InteractionSent(in)); late > discordfake.CallbackDeadline {
		t.Errorf("the deferral came %v after the interaction; Discord allows %v", late, discordfake.CallbackDeadline)
	}
	fake.WaitFor(t, testkit.Deadline, func(f *discordfake.Server) bool {
		return slices.Contains(responseKinds(f.InteractionResponses(in)), discordfake.KindEditOriginal)
	})
	rs := slices.DeleteFunc(fake.InteractionResponses(in), func(r discordfake.Response) bool {
		return r.Kind == discordfake.KindFollowup && r.Ephemeral
	})
	if got := responseKinds(rs); !slices.Equal(got, []string{discordfake.KindDeferred, discordfake.KindEditOriginal}) {
		t.Fatalf("answers to the slash command = %v, want one deferral, then the edit of the placeholder", got)
	}
	if !strings.Contains(rs[1].Content, command) {
		t.Errorf("the placeholder became %q, want it to show %q", rs[1].Content, command)
	}
}

// waitDiscordGate waits for r's gate message, checks what it offers, and waits until the worker
// has let go of the run, as a person answering later would find it.
func waitDiscordGate(t *testing.T, b *discordBot, r discordRun) discordfake.Message {
	t.Helper()
	gate := waitInRunThread(t, b.fake, r, "the gate message", contentPrefix("⏸ Run `"+r.id+"` is waiting at `gate`."))
	if got := discordLabels(gate); !slices.Equal(got, []string{"Approve", "Reject"}) {
		t.Fatalf("gate buttons = %v, want [Approve Reject]", got)
	}
	if !strings.Contains(gate.Content, "Ship v1.2?") {
		t.Errorf("gate message %q does not show the approval message", gate.Content)
	}
	waitDiscordStatus(t, b.fake, r, "paused")
	b.bot.WaitLog("orchestrator.run_stopped", map[string]string{"run_id": r.id})
	return gate
}

// liveDiscordMention is anything Discord would turn into a ping: @everyone, @here, or a user,
// role or channel mention.
var liveDiscordMention = regexp.MustCompile(`@(everyone|here)|<[@#]`)

func TestDiscordMentionsInArgumentsCannotPing(t *testing.T) {
	const pings = "@everyone @here <@123456789012345678> <@&223456789012345678> <#323456789012345678>"
	fake := discordfake.New(t)
	startDiscordBot(t, fake, botproc.Env(t))

	in := runWorkflow(fake, "hello", pings)
	r := waitDiscordRun(t, fake, "hello", 1)
	greeting := waitInRunThread(t, fake, r, "the greeting", contentPrefix("✅ Run `"+r.id+"` of `hello` completed."))
	checkDeferredInTime(t, fake, in, "/workflow run hello @\u200beveryone")
	// A name that reaches a reply as user text (escaped, not as workflow output).
	runWorkflow(fake, "@everyone", "")
	waitDiscordMessage(t, fake, discordChannel, "the unknown-workflow reply", contentPrefix("There is no workflow named "))

	messages := append(fake.BotMessages(discordChannel), fake.BotMessages(r.thread)...)
	for _, m := range messages {
		if !m.AllowedMentionsNone {
			t.Errorf("message %s was sent without allowed mentions none: %q", m.ID, m.Content)
		}
		if liveDiscordMention.MatchString(m.Content) {
			t.Errorf("message %s would ping: %q", m.ID, m.Content)
		}
	}
	for _, resp := range fake.InteractionResponses(in) {
		if liveDiscordMention.MatchString(resp.Content) {
			t.Errorf("the %s answer to the command would ping: %q", resp.Kind, resp.Content)
		}
	}
	if !strings.Contains(greeting.Content, "everyone") || !strings.Contains(greeting.Content, "123456789012345678") {
		t.Errorf("the greeting %q lost the text it quotes; mentions must be broken, not removed", greeting.Content)
	}
}

func TestDiscordLongOutputIsSplit(t *testing.T) {
	fake := discordfake.New(t)
	startDiscordBot(t, fake, botproc.Env(t))
	r := startDiscordRun(t, fake, "long", "")
	waitDiscordStatus(t, fake, r, "completed")
	waitInRunThread(t, fake, r, "the end of the output", contentHas("line 50 "))

	var parts []discordfake.Message
	for _, m := range fake.BotMessages(r.thread) {
		if !strings.HasPrefix(m.Content, "Status of run") {
			parts = append(parts, m)
		}
	}
	if len(parts) != 3 || !strings.HasPrefix(parts[0].Content, "✅ Run `"+r.id+"`") {
		t.Fatalf("the output arrived as %d messages, want 3, the first the completion message:\n%s", len(parts), fake.Dump())
	}
	all := ""
	for i, m := range parts {
		if n := utf8.RuneCountInString(m.Content); n >= discordLimit {
			t.Errorf("message %d is %d characters, want under %d", i, n, discordLimit)
		}
		all += m.Content + "\n"
	}
	for i := 1; i <= 50; i++ {
		if n := strings.Count(all, fmt.Sprintf("line %02d ", i)); n != 1 {
			t.Errorf("line %02d appears %d times in the output, want once", i, n)
		}
	}
}

// TestDiscordGateAnsweredAfterRestart: a gate answered after the bot restarted (a deploy, or
// another replica taking over) leaves the thread as truthful as one answered before: the gate
// message no longer offers buttons, and the run's status message shows that it completed.
func TestDiscordGateAnsweredAfterRestart(t *testing.T) {
	fake := discordfake.New(t)
	b := startDiscordBot(t, fake, botproc.Env(t))
	r := startDiscordRun(t, fake, "asked", "v1.2")
	gate := waitDiscordGate(t, b, r)
	restartDiscordBot(t, b)

	fake.ThreadMessage(discordAlice, r.thread, "lgtm, ship it")
	waitInRunThread(t, fake, r, "the completion message", shownHas("answer was [ship it]"))
	// The worker let go of the run a second time, after the restart: its reports are all sent.
	fake.WaitFor(t, testkit.Deadline, func(*discordfake.Server) bool {
		return len(b.bot.LogEvents("orchestrator.run_stopped")) == 2
	})
	if now := discordMessage(t, fake, gate); len(now.Buttons) != 0 {
		t.Errorf("after the run completed, the gate message %q still offers %v", now.Content, discordLabels(now))
	}
	st := discordStatusMessages(fake, r)
	if got := latestContent(st); !strings.HasPrefix(got, "Status of run `"+r.id+"`: **completed**") {
		t.Errorf("the run completed, but its latest status message says %q", got)
	}
}

// restartDiscordBot stops b and starts it again on the same home and database, and waits until
// the new process is connected to the gateway.
func restartDiscordBot(t *testing.T, b *discordBot) {
	t.Helper()
	b.bot.Stop()
	b.bot.Restart()
	b.fake.WaitFor(t, testkit.Deadline, func(*discordfake.Server) bool {
		return len(b.bot.LogEvents("discord.gateway_connected")) == 2
	})
}

// discordStatusMessages are r's status messages; a run has exactly one, edited as it goes.
func discordStatusMessages(fake *discordfake.Server, r discordRun) []discordfake.Message {
	var out []discordfake.Message
	for _, m := range fake.BotMessages(r.thread) {
		if strings.HasPrefix(m.Content, "Status of run `"+r.id+"`") {
			out = append(out, m)
		}
	}
	return out
}

// latestContent is the content of the last message, "" for none.
func latestContent(ms []discordfake.Message) string {
	if len(ms) == 0 {
		return ""
	}
	return ms[len(ms)-1].Content
}
