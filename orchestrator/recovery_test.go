package orchestrator_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"threadflow/agent/agenttest"
	"threadflow/db"
	"threadflow/testkit/runevents"
)

// The scenario of ../shared/seeds/000_22486c878f073d01.txt: a resume that fails for a tooling
// reason before any progress must not burn the run. It stays resumable with a clear error, and the
// same /workflow resume works once the tool is back.
func TestResumeWithMissingProviderLeavesRunResumable(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		missing := filepath.Join(t.TempDir(), "no-such-claude")
		real := *h.providers.bin.Load()
		h.providers.bin.Store(&missing)
		h.writeWorkflow("agentic", "name: agentic\nnodes:\n  - id: first\n    bash: echo one\n  - id: ask\n    depends_on: [first]\n    prompt: hi\n")
		run := h.waitStatus(h.startRun("agentic", "").ID, db.StatusFailed)
		if e := run.Meta.LastError; e == nil || e.Node != "ask" || e.Class != db.ClassInfra || !strings.Contains(e.Message, "CLAUDE_BIN") {
			t.Fatalf("last error = %+v; want the ask node's missing binary, naming CLAUDE_BIN", e)
		}
		for attempt := 1; attempt <= 2; attempt++ { // resume while the binary is still missing
			h.say(admin, "", "/workflow resume "+run.ID)
			run = h.waitStatus(run.ID, db.StatusPaused, db.StatusFailed, db.StatusCancelled, db.StatusCompleted)
			if run.Status != db.StatusFailed || run.Attempt != attempt {
				t.Fatalf("after failed resume %d the run is %s (attempt %d), want failed and still resumable", attempt, run.Status, run.Attempt)
			}
		}
		ev := h.events(run.ID)
		if n := runevents.Count(ev, db.EventResumeFailed, "ask"); n != 2 {
			t.Fatalf("%d resume_failed events, want one per failed attempt; events %v", n, eventTypes(ev))
		}
		h.providers.bin.Store(&real)
		h.say(admin, "", "/workflow resume "+run.ID)
		h.waitStatus(run.ID, db.StatusCompleted)
		if n := runevents.Count(h.events(run.ID), db.EventNodeCompleted, "first"); n != 1 {
			t.Fatalf("first node completed %d times, want once", n)
		}
	})
}

// An infrastructure failure before a run made any progress pauses it with the error and a hint.
func TestMissingProviderBeforeProgressPausesWithAHint(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		missing := filepath.Join(t.TempDir(), "no-such-claude")
		h.providers.bin.Store(&missing)
		h.writeWorkflow("ask", "name: ask\nnodes:\n  - id: q\n    prompt: hi\n")
		run := h.waitStatus(h.startRun("ask", "").ID, db.StatusPaused)
		p := run.Meta.Pause
		if p == nil || p.Kind != db.PauseRecovery || !strings.Contains(p.Error, "CLAUDE_BIN") || !strings.Contains(p.ResumeHint, "/workflow resume "+run.ID) {
			t.Fatalf("pause = %+v; want a recovery pause naming the missing binary and the resume command", p)
		}
		h.waitMessage("could not continue and is paused")
	})
}

func TestTransientFailuresStopAfterTheRetryBudget(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		h.writeWorkflow("flaky", `
name: flaky
nodes:
  - id: slow
    timeout: 50ms
    retry: {max_attempts: 3, delay: 10ms}
    bash: echo "$ATTEMPT" >> attempts; sleep 5
`)
		run := h.waitStatus(h.startRun("flaky", "").ID, db.StatusFailed)
		ev := h.events(run.ID)
		if s, f := runevents.Count(ev, db.EventNodeStarted, "slow"), runevents.Count(ev, db.EventNodeFailed, "slow"); s != 3 || f != 3 {
			t.Fatalf("%d starts and %d failures, want 3 and 3 (the budget)", s, f)
		}
		if !strings.Contains(run.Meta.LastError.Message, "timed out") || run.Meta.LastError.Class != db.ClassTransient {
			t.Fatalf("last error = %+v", run.Meta.LastError)
		}
	})
}

func TestAgentRateLimitIsRetriedWithinTheBudget(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		h.writeWorkflow("ask", "name: ask\nnodes:\n  - id: q\n    retry: {max_attempts: 2}\n    prompt: hello\n")
		h.script.FailNext("rate_limit", 1)
		run := h.waitStatus(h.startRun("ask", "").ID, db.StatusCompleted)
		ev := h.events(run.ID)
		if runevents.Count(ev, db.EventNodeFailed, "q") != 1 || runevents.Count(ev, db.EventNodeCompleted, "q") != 1 {
			t.Fatalf("want one transient failure then success: %v", eventTypes(ev))
		}
	})
}

// Graceful shutdown hands an unfinished run back to the queue without counting a recovery, and the
// next worker continues it at the unfinished node as the next attempt.
func TestShutdownHandsRunsBackWithoutCountingARecovery(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		h.cfg.Grace = 50 * time.Millisecond
		h.restart()
		h.writeWorkflow("long", `
name: long
nodes:
  - id: first
    bash: echo one
  - id: wait
    depends_on: [first]
    bash: 'if [ "$ATTEMPT" = 1 ]; then sleep 60; fi; echo "attempt $ATTEMPT"'
`)
		run := h.startRun("long", "")
		h.waitFor("the wait node to start", func() bool { return runevents.Count(h.events(run.ID), db.EventNodeStarted, "wait") == 1 })
		start := time.Now()
		h.shutdown()
		if d := time.Since(start); d > 10*time.Second {
			t.Fatalf("shutdown took %s; the node's process was not stopped", d)
		}
		got, err := h.store.GetRun(context.Background(), run.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != db.StatusQueued || got.Recoveries != 0 || runevents.Count(h.events(run.ID), db.EventRunReleased, "") != 1 {
			t.Fatalf("after shutdown run is %s with %d recoveries; want queued, released, none counted", got.Status, got.Recoveries)
		}
		h.start()
		got = h.waitStatus(run.ID, db.StatusCompleted)
		if got.Meta.Output != "attempt 2" || runevents.Count(h.events(run.ID), db.EventNodeCompleted, "first") != 1 {
			t.Fatalf("output %q; want the wait node continued as attempt 2 and first not repeated", got.Meta.Output)
		}
	})
}

// A worker that loses its lease (here: the run is abandoned under it) stops the node's processes at
// once instead of finishing work nobody may record.
func TestAbandonStopsTheRunningProcess(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		h.writeWorkflow("sleepy", "name: sleepy\nnodes:\n  - id: nap\n    bash: echo $$ > pid; sleep 60\n")
		run := h.startRun("sleepy", "")
		pidFile := filepath.Join(run.WorkingPath, "pid")
		var pid int
		h.waitFor("the node to write its pid", func() bool { pid = agenttest.ReadPid(pidFile); return pid > 0 })
		h.say(admin, "", "/workflow abandon "+run.ID)
		h.waitFor("the node's process to be gone", func() bool { return !agenttest.Alive(pid) })
		if got := h.waitStatus(run.ID, db.StatusCancelled); got.Status != db.StatusCancelled {
			t.Fatalf("run is %s", got.Status)
		}
	})
}

// A worker that dies between an interactive loop's iteration and its gate must not let the loop run
// on unasked: the rescued run asks about the iteration that was already done.
func TestInteractiveLoopCrashBeforeItsGateAsksAgain(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		h.shutdown()
		h.writeWorkflow("loop", "name: loop\nnodes:\n  - id: plan\n    loop:\n      prompt: draft\n      until: DONE\n      max_iterations: 3\n      interactive: true\n      gate_message: more?\n")
		h.start()
		h.shutdown() // the run is created while no worker runs
		run := h.startRun("loop", "")
		ctx := context.Background()
		dead, err := h.store.ClaimRun(ctx, "dead-worker", time.Millisecond, db.Reach{})
		if err != nil || dead.ID != run.ID {
			t.Fatalf("claim = %v, %v", dead.ID, err)
		}
		if err := os.MkdirAll(dead.WorkingPath, 0o755); err != nil { // the dead worker made the workspace first
			t.Fatal(err)
		}
		for _, e := range []db.Event{
			{RunID: run.ID, Type: db.EventNodeStarted, NodeID: "plan", Attempt: 1},
			{RunID: run.ID, Type: db.EventLoopIteration, NodeID: "plan", Attempt: 1, Data: []byte(`{"output":"draft 1","session_id":"s-1"}`)},
		} {
			if _, err := h.store.RecordEvent(ctx, dead.Lease(), e); err != nil {
				t.Fatal(err)
			}
		}
		h.start() // its rescuer finds the expired lease
		run = h.waitStatus(run.ID, db.StatusPaused)
		if p := run.Meta.Pause; p == nil || p.Kind != db.PauseLoop || p.LoopIteration != 1 || p.SessionID != "s-1" {
			t.Fatalf("pause = %+v; want the gate of iteration 1 with its session", p)
		}
		if calls := h.script.Calls(); len(calls) != 0 {
			t.Fatalf("the loop ran %d more iterations without asking", len(calls))
		}
	})
}

// A run whose frozen workflow no longer parses (a corrupt row, a parser change) fails with the
// reason; it must not take the worker down.
func TestUnparsableFrozenWorkflowFailsTheRun(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		ctx := context.Background()
		conv, err := h.store.EnsureConversation(ctx, db.Conversation{Platform: "console", ChannelID: "chan"})
		if err != nil {
			t.Fatal(err)
		}
		run, err := h.store.CreateRun(ctx, db.NewRun{Workflow: "broken", ConversationID: conv.ID, ParentConversationID: conv.ID,
			UserID: admin, WorkingPath: t.TempDir(), WorkflowSource: []byte("name: broken\nnodes: []\n")})
		if err != nil {
			t.Fatal(err)
		}
		h.engine.Workers.Wake()
		run = h.waitStatus(run.ID, db.StatusFailed)
		if e := run.Meta.LastError; e == nil || !strings.Contains(e.Message, "no longer parses") {
			t.Fatalf("last error = %+v", e)
		}
		h.waitMessage("❌ Run " + run.ID)
	})
}
