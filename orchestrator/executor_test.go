package orchestrator_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"threadflow/db"
	"threadflow/testkit/runevents"
)

// The harness's admins: admin starts most runs, ops is a second admin.
const (
	admin = "console:admin"
	ops   = "console:ops"
)

// startRun runs a workflow from chat and returns its run.
func (h *harness) startRun(name, args string) db.Run {
	h.t.Helper()
	h.say(admin, "", "/workflow run "+name+" "+args)
	runs := h.runs(name)
	if len(runs) == 0 {
		h.t.Fatalf("no run of %s was created; messages:\n%s", name, h.out.Dump())
	}
	return runs[0]
}

func TestIndependentBranchesRunInParallel(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		h.writeWorkflow("par", `
name: par
nodes:
  - id: left
    bash: sleep 0.3
  - id: right
    bash: sleep 0.3
  - id: join
    depends_on: [left, right]
    bash: echo joined
`)
		run := h.waitStatus(h.startRun("par", "").ID, db.StatusCompleted)
		// Both branches started before either finished: no layer barrier, real parallelism.
		var order []string
		for _, e := range h.events(run.ID) {
			if (e.Type == db.EventNodeStarted || e.Type == db.EventNodeCompleted) && e.NodeID != "join" {
				order = append(order, string(e.Type))
			}
		}
		want := "node_started node_started node_completed node_completed"
		if got := strings.Join(order, " "); got != want {
			t.Fatalf("branch events = %q, want %q", got, want)
		}
	})
}

func TestFailedNodeResumesWithoutRerunningCompletedNodes(t *testing.T) {
	eachEngineSerial(t, func(t *testing.T, h *harness) {
		counters := t.TempDir()
		fix := filepath.Join(counters, "fixed")
		h.writeWorkflow("three", `
name: three
nodes:
  - id: first
    bash: echo run >> "$COUNTERS/first"; echo from-first
  - id: middle
    depends_on: [first]
    bash: echo run >> "$COUNTERS/middle"; test -f "$COUNTERS/fixed" || { echo "not fixed yet" >&2; exit 3; }
  - id: last
    depends_on: [middle]
    bash: echo run >> "$COUNTERS/last"; echo "last saw $first.output"
`)
		t.Setenv("COUNTERS", counters)
		run := h.waitStatus(h.startRun("three", "").ID, db.StatusFailed)
		if run.Meta.LastError == nil || run.Meta.LastError.Node != "middle" || !strings.Contains(run.Meta.LastError.Message, "not fixed yet") {
			t.Fatalf("last error = %+v, want node middle with its stderr", run.Meta.LastError)
		}
		h.waitMessage("failed at node middle")
		if err := os.WriteFile(fix, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		h.say(admin, "", "/workflow resume "+run.ID)
		run = h.waitStatus(run.ID, db.StatusCompleted)
		assertLines(t, filepath.Join(counters, "first"), 1)
		assertLines(t, filepath.Join(counters, "middle"), 2)
		assertLines(t, filepath.Join(counters, "last"), 1)
		if !strings.Contains(run.Meta.Output, "last saw from-first") {
			t.Fatalf("output %q does not reuse the first node's output", run.Meta.Output)
		}
	})
}

func assertLines(t *testing.T, path string, want int) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(string(b), "\n"); got != want {
		t.Fatalf("%s ran %d times, want %d", filepath.Base(path), got, want)
	}
}

func TestTriggerRulesAndConditionsSkipWithReasons(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		h.writeWorkflow("rules", `
name: rules
nodes:
  - id: check
    bash: echo ok
  - id: broken
    bash: exit 1
  - id: when_ok
    depends_on: [check]
    when: "$check.output == 'ok'"
    bash: echo ran
  - id: when_not
    depends_on: [check]
    when: "$check.output != 'ok'"
    bash: echo should-not-run
  - id: after_broken
    depends_on: [broken]
    bash: echo should-not-run
  - id: cleanup
    depends_on: [broken, check]
    trigger_rule: all_done
    bash: echo cleaned
`)
		run := h.waitStatus(h.startRun("rules", "").ID, db.StatusCompleted, db.StatusFailed)
		ev := h.events(run.ID)
		reasons := map[string]string{}
		for _, e := range ev {
			if e.Type == db.EventNodeSkipped {
				reasons[e.NodeID] = string(e.Data)
			}
		}
		if !strings.Contains(reasons["when_not"], "is false") {
			t.Errorf("when_not skip reason = %q, want the condition", reasons["when_not"])
		}
		if !strings.Contains(reasons["after_broken"], "broken") {
			t.Errorf("after_broken skip reason = %q, want the failed dependency", reasons["after_broken"])
		}
		for _, node := range []string{"when_ok", "cleanup"} {
			if runevents.Count(ev, db.EventNodeCompleted, node) != 1 {
				t.Errorf("%s did not complete once", node)
			}
		}
		// cleanup ran after broken, but broken is not continue_on_error: the run failed there.
		if run.Status != db.StatusFailed || run.Meta.LastError == nil || run.Meta.LastError.Node != "broken" {
			t.Errorf("run is %s (%+v), want failed at broken even though cleanup ran", run.Status, run.Meta.LastError)
		}
	})
}

func TestGatePausedRunSurvivesRestartAndGetsTheComment(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		h.writeWorkflow("gated", `
name: gated
nodes:
  - id: build
    bash: echo built
  - id: review
    depends_on: [build]
    approval:
      message: "Ship $ARGUMENTS?"
      capture_response: true
  - id: ship
    depends_on: [review]
    bash: 'echo "shipping with note: $review.output"'
`)
		run := h.waitStatus(h.startRun("gated", "v1.2").ID, db.StatusPaused)
		if got := h.waitMessage("Ship v1.2?"); len(got) != 1 || len(got[0].Buttons) != 2 {
			t.Fatalf("gate message with two buttons not orchestratortest.Posted; messages:\n%s", h.out.Dump())
		}
		h.restart()
		h.say(admin, "", "/workflow approve "+run.ID+" looks good, ship it")
		run = h.waitStatus(run.ID, db.StatusCompleted)
		if !strings.Contains(run.Meta.Output, "shipping with note: looks good, ship it") {
			t.Fatalf("output %q lacks the approval comment", run.Meta.Output)
		}
		if n := runevents.Count(h.events(run.ID), db.EventNodeCompleted, "build"); n != 1 {
			t.Fatalf("build completed %d times, want once", n)
		}
	})
}

func TestEditingWorkflowFileDoesNotChangeWhatResumeExecutes(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		frozen := func(output string) string {
			return "name: frozen\nnodes:\n  - id: gate\n    approval: {message: \"go?\"}\n" +
				"  - id: after\n    depends_on: [gate]\n    bash: echo " + output + "\n"
		}
		h.writeWorkflow("frozen", frozen("original"))
		run := h.waitStatus(h.startRun("frozen", "").ID, db.StatusPaused)
		h.writeWorkflow("frozen", frozen("edited"))
		h.say(admin, "", "/workflow approve "+run.ID)
		run = h.waitStatus(run.ID, db.StatusCompleted)
		if run.Meta.Output != "original" {
			t.Fatalf("resume executed %q, want the frozen workflow's output %q", run.Meta.Output, "original")
		}
	})
}

// refineCalls counts the agent's "refine" turns that resumed the session stale and those that
// started a fresh one.
func refineCalls(h *harness, stale string) (resumed, fresh int) {
	for _, c := range h.script.Calls() {
		if strings.HasPrefix(c.Prompt, "refine") {
			switch c.ResumeSession {
			case stale:
				resumed++
			case "":
				fresh++
			}
		}
	}
	return resumed, fresh
}

func TestStaleAgentSessionFallsBackToAFreshOne(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		run, s := sharedSessionAtGate(t, h)
		h.script.Expire(s.SessionID) // expires during the human wait
		h.say(admin, "", "/workflow approve "+run.ID)
		run = h.waitCompleted(run.ID)
		stale, fresh := refineCalls(h, s.SessionID)
		if stale != 1 || fresh != 1 {
			t.Fatalf("refine calls: %d with the stale id, %d fresh; want 1 and 1", stale, fresh)
		}
		ev := h.events(run.ID)
		if runevents.Count(ev, db.EventNodeFailed, "") != 0 || runevents.Count(ev, db.EventSessionReset, "refine") != 1 {
			t.Fatalf("want no node_failed and one session_reset; events: %v", eventTypes(ev))
		}
		if len(h.waitMessage("Session continuity was lost")) != 1 {
			t.Fatalf("chat was not told once that continuity was lost:\n%s", h.out.Dump())
		}
		after, _ := h.store.GetSession(context.Background(), "", run.ID, "*shared")
		if after.SessionID == s.SessionID || after.SessionID == "" {
			t.Fatalf("stored session after fallback = %q, want the fresh one", after.SessionID)
		}
	})
}

func TestResumedInteractiveLoopSurvivesAStaleGateSession(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		run := interactiveLoopAtGate(h)
		gateSession := run.Meta.Pause.SessionID
		if gateSession == "" || run.Meta.Pause.LoopIteration != 1 {
			t.Fatalf("pause context = %+v, want iteration 1 with its session", run.Meta.Pause)
		}
		h.script.Expire(gateSession)
		thread := runThread(t, h, run.ID)
		h.say(admin, thread, "add a rollback step")
		run = h.waitStatus(run.ID, db.StatusPaused, db.StatusFailed)
		if run.Status != db.StatusPaused || run.Meta.Pause.LoopIteration != 2 {
			t.Fatalf("after feedback run is %s at %+v, want paused at iteration 2", run.Status, run.Meta.Pause)
		}
		calls := h.script.Calls()
		last, prev := calls[len(calls)-1], calls[len(calls)-2]
		if prev.ResumeSession != gateSession || last.ResumeSession != "" {
			t.Fatalf("iteration 2 calls resumed %q then %q; want the gate session then a fresh one", prev.ResumeSession, last.ResumeSession)
		}
		if !strings.Contains(last.Prompt, "iteration 2 feedback: add a rollback step") {
			t.Fatalf("prompt %q lacks $LOOP_USER_INPUT", last.Prompt)
		}
		if n := runevents.Count(h.events(run.ID), db.EventNodeFailed, ""); n != 0 {
			t.Fatalf("%d node_failed events, want none", n)
		}
		h.say(admin, thread, "lgtm")
		h.waitStatus(run.ID, db.StatusCompleted)
	})
}

// runThread returns the thread the run reports in.
func runThread(t *testing.T, h *harness, id string) string {
	t.Helper()
	run, err := h.store.GetRun(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	_, _, thread, ok := db.ParseConversationKey(run.ConversationID)
	if !ok || thread == "" {
		t.Fatalf("run %s has no thread: %q", id, run.ConversationID)
	}
	return thread
}

func eventTypes(ev []db.Event) []string {
	var out []string
	for _, e := range ev {
		out = append(out, string(e.Type)+":"+e.NodeID)
	}
	return out
}

// A node skipped because its dependency failed is decided again after a resume, and may be skipped
// again for another reason: that is a new record, not a conflict with the first.
func TestResumeDecidesSkippedNodesAgain(t *testing.T) {
	eachEngineSerial(t, func(t *testing.T, h *harness) {
		fixed := filepath.Join(t.TempDir(), "fixed")
		t.Setenv("FIXED", fixed)
		h.writeWorkflow("skips", `
name: skips
nodes:
  - id: a
    bash: test -f "$FIXED" && echo y
  - id: b
    depends_on: [a]
    when: "$a.output == 'x'"
    bash: echo b ran
  - id: c
    depends_on: [a]
    trigger_rule: all_done
    bash: test -f "$FIXED" && echo c ran
`)
		run := h.waitStatus(h.startRun("skips", "").ID, db.StatusFailed)
		if err := os.WriteFile(fixed, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		h.say(admin, "", "/workflow resume "+run.ID)
		run = h.waitCompleted(run.ID)
		var reasons []string
		for _, e := range h.events(run.ID) {
			if e.Type == db.EventNodeSkipped && e.NodeID == "b" {
				reasons = append(reasons, string(e.Data))
			}
		}
		if len(reasons) != 2 || !strings.Contains(reasons[0], "a failed") || !strings.Contains(reasons[1], "is false") {
			t.Fatalf("b's skips = %v; want the failed dependency, then the false condition", reasons)
		}
	})
}

// A stale shared session whose fresh replacement also fails (here: not logged in) is forgotten in
// every scope: the resume starts fresh instead of trying the dead id again.
func TestStaleSharedSessionIsNotTriedAgainAfterAResume(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		run, s := sharedSessionAtGate(t, h)
		h.script.Expire(s.SessionID)
		h.script.FailNext("not_logged_in", 1) // the fresh session's turn fails
		h.say(admin, "", "/workflow approve "+run.ID)
		h.waitMessage("not logged in")
		h.waitStatus(run.ID, db.StatusFailed, db.StatusPaused)
		h.say(admin, "", "/workflow resume "+run.ID)
		run = h.waitCompleted(run.ID)
		stale, fresh := refineCalls(h, s.SessionID)
		if stale != 1 || fresh != 2 {
			t.Fatalf("refine calls: %d with the dead id, %d fresh; want 1 and 2 (the resume must not try the dead id)", stale, fresh)
		}
	})
}

// The same for a loop's session: after a session_reset the resumed loop starts fresh.
func TestStaleLoopSessionIsNotTriedAgainAfterAResume(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		run := interactiveLoopAtGate(h)
		dead := run.Meta.Pause.SessionID
		h.script.Expire(dead)
		h.script.FailNext("not_logged_in", 1)
		thread := runThread(t, h, run.ID)
		h.say(admin, thread, "add a rollback step")
		h.waitMessage("not logged in")
		h.waitStatus(run.ID, db.StatusFailed, db.StatusPaused)
		h.say(admin, "", "/workflow resume "+run.ID)
		h.waitFor("the resumed iteration", func() bool {
			r, err := h.store.GetRun(context.Background(), run.ID)
			return err == nil && r.Status == db.StatusPaused && r.Meta.Pause != nil && r.Meta.Pause.LoopIteration == 2
		})
		stale := 0
		for _, c := range h.script.Calls() {
			if c.ResumeSession == dead {
				stale++
			}
		}
		if stale != 1 {
			t.Fatalf("%d calls resumed the dead session, want 1 (the resume must start fresh)", stale)
		}
	})
}

// sharedSessionAtGate runs a workflow whose two prompt nodes share one agent session around an
// approval gate, and returns the run paused at the gate with the shared session it stored.
func sharedSessionAtGate(t *testing.T, h *harness) (db.Run, db.Session) {
	t.Helper()
	h.writeWorkflow("chat", `
name: chat
nodes:
  - id: draft
    prompt: "draft $ARGUMENTS"
    context: shared
  - id: wait
    depends_on: [draft]
    approval: {message: "continue?"}
  - id: refine
    depends_on: [wait]
    prompt: "refine it"
    context: shared
`)
	run := h.waitStatus(h.startRun("chat", "a plan").ID, db.StatusPaused)
	s, err := h.store.GetSession(context.Background(), "", run.ID, "*shared")
	if err != nil || s.SessionID == "" {
		t.Fatalf("shared session not stored: %+v %v", s, err)
	}
	return run, s
}

// interactiveLoopAtGate runs an interactive loop and returns the run paused at the gate after its
// first iteration, with that iteration's session in the pause.
func interactiveLoopAtGate(h *harness) db.Run {
	h.t.Helper()
	h.writeWorkflow("loop", `
name: loop
nodes:
  - id: plan
    loop:
      prompt: "iteration $LOOP_ITERATION feedback: $LOOP_USER_INPUT"
      until: PLAN_APPROVED
      max_iterations: 5
      interactive: true
      gate_message: "Reply with feedback or approve."
`)
	return h.waitStatus(h.startRun("loop", "").ID, db.StatusPaused)
}
