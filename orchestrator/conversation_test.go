package orchestrator_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"threadflow/agent"
	"threadflow/agent/agenttest"
	"threadflow/conversation"
	"threadflow/db"
	"threadflow/orchestrator/dispatch"
)

// submit hands messages to a fresh Inbox over the real store (its de-duplication table) and waits
// until every one was handled, as an adapter and the bot's wiring do.
func (h *harness) submit(msgs ...conversation.Message) {
	h.t.Helper()
	in := conversation.NewInbox(h.engine.Dispatcher, h.store, 4, zaptest.NewLogger(h.t))
	for _, m := range msgs {
		if _, err := in.Submit(context.Background(), m); err != nil {
			h.t.Fatal(err)
		}
	}
	if err := in.Close(context.Background()); err != nil {
		h.t.Fatal(err)
	}
}

func chatMessage(event, text string) conversation.Message {
	return conversation.Message{Address: conversation.Address{Platform: "console", ChannelID: "chan"}, UserID: admin,
		Text: text, EventID: event, Mentioned: true}
}

func TestRedeliveredEventStartsOneRunAlsoAfterARestart(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		m := chatMessage("evt-1", "/workflow run hello world")
		h.submit(m, m, m)
		h.restart()
		h.submit(m)
		if runs := h.runs("hello"); len(runs) != 1 {
			t.Fatalf("%d runs for one event delivered four times, want 1", len(runs))
		}
	})
}

func TestBurstOfOneConversationIsHandledInOrder(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		var msgs []conversation.Message
		for i := range 12 {
			msgs = append(msgs, chatMessage(fmt.Sprintf("burst-%d", i), fmt.Sprintf("/workflow run hello n%02d", i)))
		}
		h.submit(msgs...)
		runs := h.runs("hello")
		if len(runs) != 12 {
			t.Fatalf("%d runs, want 12", len(runs))
		}
		// Runs list newest first; the arguments must come out in the order they were sent.
		for i, r := range runs {
			if want := fmt.Sprintf("n%02d", 11-i); r.UserMessage != want {
				t.Fatalf("run %d has arguments %q, want %q: messages were not handled in order", i, r.UserMessage, want)
			}
		}
	})
}

func TestUsersOutsideTheAllowListAreIgnored(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		h.cfg.Auth = dispatch.NewAuth([]string{"console:alice"}, nil)
		h.restart()
		if replies := h.say("console:mallory", "", "/workflow run hello world"); len(replies) != 0 {
			t.Fatalf("a user outside ALLOWED_USER_IDS got replies: %s", joined(replies))
		}
		if runs := h.runs("hello"); len(runs) != 0 {
			t.Fatal("a user outside ALLOWED_USER_IDS started a run")
		}
		h.say("console:alice", "", "/workflow run hello world")
		if runs := h.runs("hello"); len(runs) != 1 {
			t.Fatal("an allowed user could not start a run")
		}
	})
}

// Free text to the bot goes to the conversation's assistant. A stale stored session is cleared and
// the message is answered by a fresh session once (../shared/seeds/003_744e4bbd1dcb2334.txt); the
// next message continues the new session, and /reset forgets it.
func TestAssistantRecoversFromAStaleSessionOnce(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		h.cfg.DefaultProvider = "claude"
		h.restart()
		ctx := context.Background()
		h.say(admin, "", "hello there")
		first, err := h.store.GetSession(ctx, "console:chan", "", "")
		if err != nil || first.SessionID == "" {
			t.Fatalf("no session stored after the first answer: %+v %v", first, err)
		}
		h.script.Expire(first.SessionID)
		replies := joined(h.say(admin, "", "are you still there"))
		if !strings.Contains(replies, "starts a fresh one") || !strings.Contains(replies, "ok: are you still there") {
			t.Fatalf("reply after an expired session:\n%s", replies)
		}
		second, _ := h.store.GetSession(ctx, "console:chan", "", "")
		if second.SessionID == "" || second.SessionID == first.SessionID {
			t.Fatalf("stored session after the fallback = %q, want a new one", second.SessionID)
		}
		if replies := joined(h.say(admin, "", "third message")); strings.Contains(replies, "fresh") {
			t.Fatalf("the third message failed again:\n%s", replies)
		}
		calls := h.script.Calls()
		if last := calls[len(calls)-1]; last.ResumeSession != second.SessionID {
			t.Fatalf("third message resumed %q, want the new session %q", last.ResumeSession, second.SessionID)
		}
		h.say(admin, "", "/reset")
		if s, _ := h.store.GetSession(ctx, "console:chan", "", ""); s.SessionID != "" {
			t.Fatalf("/reset left session %q", s.SessionID)
		}
	})
}

// A chat turn whose CLI hangs is stopped by the idle watchdog with everything it started, the person
// is told why, and the conversation's next message is answered: one hung turn does not hold the
// conversation.
func TestAssistantHungTurnDoesNotHoldTheConversation(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		h.cfg.DefaultProvider = "claude"
		h.providers.cfg.Store(&agent.Config{IdleTimeout: 300 * time.Millisecond})
		h.restart()
		h.script.FailNext("hang", 1)
		replies := joined(h.say(admin, "", "hello there"))
		if !strings.Contains(replies, "printed nothing for 300ms") || !strings.Contains(replies, "Your next message will try again") {
			t.Fatalf("reply to the hung turn:\n%s", replies)
		}
		for _, pid := range h.script.Hung() {
			h.waitFor(fmt.Sprintf("pid %d to die", pid), func() bool { return !agenttest.Alive(pid) })
		}
		// The watchdog's short limit was for the hung turn; a loaded CI machine can take longer than
		// 300ms to start the fake CLI, so the healthy turn gets a limit it cannot hit by slowness alone.
		h.providers.cfg.Store(&agent.Config{IdleTimeout: time.Minute})
		if replies := joined(h.say(admin, "", "are you there")); !strings.Contains(replies, "ok: are you there") {
			t.Fatalf("the next message was not answered:\n%s", replies)
		}
	})
}

// Shutting the engine down stops an agent node's CLI and everything it started, including what
// moved to another session.
func TestShutdownKillsTheAgentNodesProcesses(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		h.writeWorkflow("ask", "name: ask\nnodes:\n  - id: ask\n    prompt: think\n")
		h.script.FailNext("hang", 1)
		h.startRun("ask", "")
		h.waitFor("the agent to hang", func() bool { return len(h.script.Hung()) == 3 })
		h.shutdown()
		for _, pid := range h.script.Hung() {
			h.waitFor(fmt.Sprintf("pid %d to die", pid), func() bool { return !agenttest.Alive(pid) })
		}
		h.start() // for the cleanup's shutdown
	})
}

// A process claims only runs it can report on: a run started on another platform (here Slack, which
// this harness has no outbox for) is left for a process that has, even when it was queued first.
func TestWorkersClaimOnlyRunsTheyCanReport(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		h.cfg.ClaimReportableOnly = true
		h.restart()
		ctx := context.Background()
		conv, err := h.store.EnsureConversation(ctx, db.Conversation{Platform: "slack", ChannelID: "C1"})
		if err != nil {
			t.Fatal(err)
		}
		src := []byte("name: hello\nnodes:\n  - id: a\n    bash: echo hi\n")
		other, err := h.store.CreateRun(ctx, db.NewRun{Workflow: "hello", ConversationID: conv.ID, ParentConversationID: conv.ID,
			UserID: "slack:U1", WorkingPath: t.TempDir(), WorkflowSource: src})
		if err != nil {
			t.Fatal(err)
		}
		ours := h.waitStatus(h.startRun("hello", "world").ID, db.StatusCompleted)
		if got, _ := h.store.GetRun(ctx, other.ID); got.Status != db.StatusQueued {
			t.Fatalf("the Slack run is %s after run %s completed; a process without Slack must leave it queued", got.Status, ours.ID)
		}
	})
}

// Issue 27: a request handled again (a process took it over from one that died after creating its
// run, or two handled it at once) starts one run, whose id derives from the event, announced once;
// nobody is told anything failed.
func TestARequestHandledAgainStartsOneRunAnnouncedOnce(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		m := chatMessage("evt-again", "/workflow run hello world")
		recovered := m
		recovered.Recovered = true
		done := make(chan struct{})
		for i := range 4 { // the original and the take-over at once, twice over
			go func() {
				defer func() { done <- struct{}{} }()
				h.engine.Dispatcher.Handle(context.Background(), []conversation.Message{m, recovered}[i%2])
			}()
		}
		for range 4 {
			<-done
		}
		id := db.EventRunID("console", "evt-again")
		h.waitCompleted(id)
		h.engine.Dispatcher.Handle(context.Background(), recovered) // taken over after the run ended
		h.delivered()
		if runs := h.runs("hello"); len(runs) != 1 || runs[0].ID != id {
			t.Fatalf("runs %+v; want the one run %s", runs, id)
		}
		if n := len(h.out.Find("▶ hello - run " + id)); n != 1 {
			t.Errorf("%d announcements, want one:\n%s", n, h.out.Dump())
		}
		if wrong := h.out.Find("went wrong"); len(wrong) != 0 {
			t.Errorf("someone was told it failed:\n%s", h.out.Dump())
		}
	})
}
