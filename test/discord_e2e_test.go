package test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"threadflow/adapters/discord/discordfake"
	"threadflow/db/dbtest"
	"threadflow/testkit"
	"threadflow/testkit/botproc"
)

func TestDiscordRunHelloWorld(t *testing.T) {
	fake := discordfake.New(t)
	b := startDiscordBot(t, fake, botproc.Env(t))
	// Announced once Discord answered with the bot's own user (issue 26).
	b.bot.WaitStdout(regexp.MustCompile(`^Discord on: @threadflow\.$`))
	in := runWorkflow(fake, "hello", "world")
	checkDeferredInTime(t, fake, in, "/workflow run hello world")

	r := waitDiscordRun(t, fake, "hello", 1)
	waitDiscordStatus(t, fake, r, "completed")
	done := waitInRunThread(t, fake, r, "the completion message", contentPrefix("✅ Run `"+r.id+"` of `hello` completed."))
	if !strings.Contains(done.Content, "Hello, world!") {
		t.Errorf("completion message %q does not show the output Hello, world!", done.Content)
	}
	if want := "▶ `hello` - run `" + r.id + "` by " + aliceShown; r.root.Content != want {
		t.Errorf("root message = %q, want %q", r.root.Content, want)
	}
	if n := len(discordRoots(fake)); n != 1 {
		t.Errorf("%d run announcements in the channel, want 1", n)
	}
	if n := len(statusMessages(fake, r)); n != 1 {
		t.Errorf("%d status messages in the thread, want one, edited in place", n)
	}
}

// checkDeferredInTime checks that a slash command was deferred once, within Discord's callback
// deadline, and that the "thinking" placeholder was then replaced by the command that ran.
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
	rs := fake.InteractionResponses(in)
	if got := responseKinds(rs); !slices.Equal(got, []string{discordfake.KindDeferred, discordfake.KindEditOriginal}) {
		t.Fatalf("answers to the slash command = %v, want one deferral, then the edit of the placeholder", got)
	}
	if !strings.Contains(rs[1].Content, command) {
		t.Errorf("the placeholder became %q, want it to show %q", rs[1].Content, command)
	}
}

// statusMessages are r's status messages; a run has exactly one, edited as it goes.
func statusMessages(fake *discordfake.Server, r discordRun) []discordfake.Message {
	var out []discordfake.Message
	for _, m := range fake.BotMessages(r.thread) {
		if strings.HasPrefix(m.Content, "Status of run `"+r.id+"`") {
			out = append(out, m)
		}
	}
	return out
}

func TestDiscordGateAnswers(t *testing.T) {
	tests := []struct {
		name       string
		answer     func(fake *discordfake.Server, r discordRun, gate discordfake.Message)
		wantStatus string
		wantGate   string // the gate message once answered
		wantOutput string // "" when the node after the gate must not run
	}{
		{"Approve button", func(f *discordfake.Server, _ discordRun, gate discordfake.Message) {
			f.Click(discordAlice, gate, "Approve")
		},
			"completed", "✅ Approved by " + aliceShown, "answer was []"},
		{"lgtm typed in the thread", func(f *discordfake.Server, r discordRun, _ discordfake.Message) {
			f.ThreadMessage(discordAlice, r.thread, "lgtm")
		},
			"completed", "✅ Approved by " + aliceShown, "answer was []"}, // a bare yes carries no note
		{"no typed in the thread", func(f *discordfake.Server, r discordRun, _ discordfake.Message) {
			f.ThreadMessage(discordAlice, r.thread, "no")
		},
			"cancelled", "🛑 Rejected by " + aliceShown, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			fake := discordfake.New(t)
			b := startDiscordBot(t, fake, botproc.Env(t))
			runWorkflow(fake, "asked", "v1.2")
			r := waitDiscordRun(t, fake, "asked", 1)
			gate := waitDiscordGate(t, b, r)

			tt.answer(fake, r, gate)
			waitDiscordStatus(t, fake, r, tt.wantStatus)
			if tt.wantOutput != "" {
				waitInRunThread(t, fake, r, "the completion message", shownHas(tt.wantOutput))
			} else {
				waitInRunThread(t, fake, r, "the cancellation notice", contentHas("The run is cancelled."))
				for _, m := range fake.BotMessages(r.thread) {
					if strings.Contains(m.Content, "answer was") {
						t.Errorf("the node after a rejected gate ran: %q", m.Content)
					}
				}
			}
			answered := discordMessage(t, fake, gate)
			if !strings.HasPrefix(answered.Content, tt.wantGate) || len(answered.Buttons) != 0 {
				t.Errorf("answered gate message = %q with buttons %v; want it to start %q, without buttons",
					answered.Content, discordLabels(answered), tt.wantGate)
			}
		})
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

// TestDiscordFailedRunPrompt is seed 001 on Discord: a fresh run never silently resumes an older
// failed one; the person gets three buttons, and Start fresh runs the new arguments.
func TestDiscordFailedRunPrompt(t *testing.T) {
	fake := discordfake.New(t)
	b := startDiscordBot(t, fake, botproc.Env(t))
	runWorkflow(fake, "picky", "A")
	failed := waitDiscordRun(t, fake, "picky", 1)
	waitDiscordStatus(t, fake, failed, "failed")
	failure := waitInRunThread(t, fake, failed, "the failure message", contentPrefix("❌ Run `"+failed.id+"` of `picky` failed at node `deploy`"))
	if got := discordLabels(failure); !slices.Equal(got, []string{"Resume", "Abandon"}) {
		t.Errorf("failure buttons = %v, want [Resume Abandon]", got)
	}
	b.bot.WaitLog("orchestrator.run_stopped", map[string]string{"run_id": failed.id})

	runWorkflow(fake, "picky", "B")
	prompt := waitDiscordMessage(t, fake, discordChannel, "the failed-run prompt", contentPrefix("Nothing was started: run `"+failed.id+"`"))
	if got := discordLabels(prompt); !slices.Equal(got, []string{"Resume", "Abandon", "Start fresh"}) {
		t.Fatalf("prompt buttons = %v, want [Resume Abandon Start fresh]", got)
	}
	for _, want := range []string{"**failed**", "It was started with: A", "/workflow run picky --force B"} {
		if !strings.Contains(prompt.Content, want) {
			t.Errorf("prompt %q does not contain %q", prompt.Content, want)
		}
	}
	if n := len(discordRoots(fake)); n != 1 {
		t.Fatalf("%d runs announced after the prompt, want only the failed one", n)
	}

	click := fake.Click(discordAlice, prompt, "Start fresh")
	fresh := waitDiscordRun(t, fake, "picky", 2)
	done := waitInRunThread(t, fake, fresh, "the fresh run's completion", contentPrefix("✅ Run `"+fresh.id+"` of `picky` completed."))
	if !strings.Contains(done.Content, "deployed B") {
		t.Errorf("the fresh run reported %q, want the output of the new arguments, deployed B", done.Content)
	}
	if fresh.id == failed.id {
		t.Fatalf("Start fresh reused run %s", failed.id)
	}
	waitDiscordMessage(t, fake, discordChannel, "the prompt settled", func(m discordfake.Message) bool {
		return m.ID == prompt.ID && strings.HasPrefix(m.Content, "Started a fresh run `"+fresh.id+"`") && len(m.Buttons) == 0
	})
	if got := responseKinds(fake.InteractionResponses(click)); !slices.Equal(got, []string{discordfake.KindDeferredUpdate}) {
		t.Errorf("answers to the click = %v, want one deferred update", got)
	}
	if st := statusMessages(fake, failed); len(st) != 1 || !strings.Contains(st[0].Content, "**failed**") {
		t.Errorf("the failed run's status = %v; a fresh run must leave it failed", st)
	}
}

// TestDiscordReplicasAnswerOnce: two bot processes on one PostgreSQL database, connected to the
// same gateway with the same token, both receive every interaction; exactly one answers it.
func TestDiscordReplicasAnswerOnce(t *testing.T) {
	dbURL := dbtest.PostgresDatabase(t)
	fake := discordfake.New(t)
	var replicas []*discordBot
	for range 2 {
		env := botproc.Env(t)
		env["DATABASE_URL"] = dbURL
		replicas = append(replicas, startDiscordBot(t, fake, env))
	}
	if n := fake.Sessions(); n != 2 {
		t.Fatalf("%d gateway sessions, want one per replica", n)
	}

	in := runWorkflow(fake, "hello", "replicas")
	r := waitDiscordRun(t, fake, "hello", 1)
	waitInRunThread(t, fake, r, "the completion message", contentHas("Hello, replicas!"))
	checkDeferredInTime(t, fake, in, "/workflow run hello replicas")

	// The other replica did receive the interaction and stood down: the test is not vacuous.
	stoodDown := func(b *discordBot) bool {
		return slices.ContainsFunc(b.bot.LogEvents("discord.event_claimed_elsewhere"), func(rec map[string]any) bool {
			return botproc.HasFields(rec, map[string]string{"event": in})
		})
	}
	fake.WaitFor(t, testkit.Deadline, func(*discordfake.Server) bool { return stoodDown(replicas[0]) || stoodDown(replicas[1]) })
	if stoodDown(replicas[0]) && stoodDown(replicas[1]) {
		t.Error("both replicas stood down: nobody owned the interaction")
	}
	if n := len(discordRoots(fake)); n != 1 {
		t.Errorf("%d runs announced for one interaction, want 1", n)
	}
	created := len(replicas[0].bot.LogEvents("orchestrator.run_created")) + len(replicas[1].bot.LogEvents("orchestrator.run_created"))
	if created != 1 {
		t.Errorf("the replicas created %d runs for one interaction, want 1", created)
	}
	if n := len(statusMessages(fake, r)); n != 1 {
		t.Errorf("%d status messages, want 1", n)
	}
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
	runWorkflow(fake, "long", "")
	r := waitDiscordRun(t, fake, "long", 1)
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
	runWorkflow(fake, "asked", "v1.2")
	r := waitDiscordRun(t, fake, "asked", 1)
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
	st := statusMessages(fake, r)
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

// latestContent is the content of the last message, "" for none.
func latestContent(ms []discordfake.Message) string {
	if len(ms) == 0 {
		return ""
	}
	return ms[len(ms)-1].Content
}
