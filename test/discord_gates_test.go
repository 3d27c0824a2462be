package test

import (
	"slices"
	"strings"
	"testing"

	"threadflow/adapters/discord/discordfake"
	"threadflow/db"
	"threadflow/db/dbtest"
	"threadflow/testkit"
	"threadflow/testkit/botproc"
)

// waitEphemeralAnswer waits for an ephemeral answer to interaction id that contains want.
func waitEphemeralAnswer(t *testing.T, f *discordfake.Server, id, want string) {
	t.Helper()
	f.WaitFor(t, testkit.Deadline, func(f *discordfake.Server) bool {
		return slices.ContainsFunc(f.InteractionResponses(id), func(r discordfake.Response) bool {
			return r.Ephemeral && strings.Contains(r.Content, want)
		})
	})
}

// TestDiscordGateRules: three listed approvers, never the requester, two needed. Refused clicks and
// commands are answered privately, a refused typed reply openly but without a ping; nothing changes
// until two listed people approved.
func TestDiscordGateRules(t *testing.T) {
	t.Parallel()
	botproc.ForEachEngine(t, botproc.Env, func(t *testing.T, env map[string]string) {
		fake := discordfake.New(t)
		b := startDiscordBot(t, fake, env)
		runWorkflow(fake, "guarded", "v1")
		r := waitDiscordRun(t, fake, "guarded", 1)
		gate := waitInRunThread(t, fake, r, "the gate message", contentPrefix("⏸ Run `"+r.id+"` is waiting at `confirm`."))
		for _, want := range []string{"It needs 2 approvals from different people", "The requester (" + aliceShown + ") may not approve it",
			"Or type `/workflow approve " + r.id + " [note]`"} {
			if !strings.Contains(gate.Content, want) {
				t.Errorf("gate message lacks %q:\n%s", want, gate.Content)
			}
		}
		b.bot.WaitLog("orchestrator.run_stopped", map[string]string{"run_id": r.id})

		// A typed reply has no interaction to answer privately: the refusal is addressed to its author
		// (without a ping). After a click or a command, refusals are ephemeral followups.
		fake.ThreadMessage(discordMallory, r.thread, "lgtm")
		waitInRunThread(t, fake, r, "the refusal of mallory's reply", contentHas("You may not answer gate `confirm`"))
		self := fake.Click(discordAlice, gate, "Approve")
		waitEphemeralAnswer(t, fake, self, "does not allow self-approval")
		click := fake.Click(discordMallory, gate, "Approve")
		waitEphemeralAnswer(t, fake, click, "You may not answer gate `confirm`")
		command := fake.SlashCommand(discordMallory, r.thread, "approve", map[string]any{"id": r.id})
		waitEphemeralAnswer(t, fake, command, "You may not answer gate `confirm`")
		if n := countRunEvents(t, env, r.id, db.EventGateRefused); n != 4 {
			t.Errorf("%d refusals recorded, want 4", n)
		}
		if now := discordMessage(t, fake, gate); len(now.Buttons) != 2 {
			t.Errorf("gate message after refusals has buttons %v; want Approve and Reject still", discordLabels(now))
		}

		fake.ThreadMessage(discordBob, r.thread, "approved, changelog checked")
		waitInRunThread(t, fake, r, "bob's counted approval", contentHas("👍 Approved by "+bobShown+" (1 of 2 approvals)"))
		fake.Click(discordCarol, gate, "Approve")
		waitDiscordStatus(t, fake, r, "completed")
		waitInRunThread(t, fake, r, "the completion message", shownHas("shipped v1 with notes [changelog checked"))
		// Bob's name comes back from his recorded approval; Carol's from her click.
		if now := discordMessage(t, fake, gate); len(now.Buttons) != 0 || !strings.HasPrefix(now.Content, "✅ Approved by "+bobShown+" and "+carolShown+":") {
			t.Errorf("answered gate message = %q with %v", now.Content, discordLabels(now))
		}
	})
}

// checkOneReminderAndTimeout checks r's thread holds exactly one reminder and one timeout notice,
// and that the gate message now says it timed out, without buttons.
func checkOneReminderAndTimeout(t *testing.T, fake *discordfake.Server, r discordRun, gate discordfake.Message) {
	t.Helper()
	if now := discordMessage(t, fake, gate); len(now.Buttons) != 0 || !strings.Contains(now.Content, "timed out") {
		t.Errorf("gate message after the timeout = %q with buttons %v", now.Content, discordLabels(now))
	}
	reminders, timeouts := 0, 0
	for _, m := range fake.BotMessages(r.thread) {
		switch {
		case m.ID == gate.ID:
		case strings.HasPrefix(m.Content, "⏰ Reminder"):
			reminders++
		case strings.Contains(m.Content, "timed out: nobody answered"):
			timeouts++
		}
	}
	if reminders != 1 || timeouts != 1 {
		t.Errorf("%d reminders and %d timeout notices in the thread, want 1 and 1:\n%s", reminders, timeouts, fake.Dump())
	}
}

// TestGateTimerFiresOnceWithTwoReplicas: two replicas on one PostgreSQL both look for due gate
// timers; the reminder and the timeout are each posted, and recorded, exactly once.
func TestGateTimerFiresOnceWithTwoReplicas(t *testing.T) {
	t.Parallel()
	dbURL := dbtest.PostgresDatabase(t)
	fake := discordfake.New(t)
	var replicas []*discordBot
	for range 2 {
		env := botproc.Env(t)
		env["DATABASE_URL"] = dbURL
		replicas = append(replicas, startDiscordBot(t, fake, env))
	}
	r := startDiscordRun(t, fake, "timed", "")
	gate := waitInRunThread(t, fake, r, "the gate message", contentHas("(4s after it was asked), it is rejected."))
	waitDiscordStatus(t, fake, r, "cancelled")
	waitInRunThread(t, fake, r, "the timeout", contentHas("timed out: nobody answered within 4s"))
	// Not vacuous: each replica looks for due timers at least every 5s; wait until both have looked
	// again after the timeout fired, so a second firing would have happened by now.
	for _, b := range replicas {
		seen := len(b.bot.LogEvents("orchestrator.gate_timers_checked"))
		fake.WaitFor(t, testkit.Deadline, func(*discordfake.Server) bool {
			return len(b.bot.LogEvents("orchestrator.gate_timers_checked")) > seen
		})
	}
	checkOneReminderAndTimeout(t, fake, r, gate)
	fired := 0
	for _, b := range replicas {
		fired += len(b.bot.LogEvents("orchestrator.gate_timed_out"))
	}
	env := map[string]string{"DATABASE_URL": dbURL}
	if n := countRunEvents(t, env, r.id, db.EventGateResolved); fired != 1 || n != 1 {
		t.Errorf("the timeout fired %d times in the logs and was recorded %d times, want once", fired, n)
	}
}
