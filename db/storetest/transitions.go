package storetest

import (
	"errors"
	"testing"

	"threadflow/db"
)

// opCase is one state-machine operation as the table tests drive it.
type opCase struct {
	name   string
	op     db.Op
	to     db.Status
	events []db.EventType // appended by a successful call, in order
	node   string         // node id of the first appended event
	call   func(e *env, r db.Run, l db.Lease) (db.Run, error)
}

// opCases are the transitions that take a run id or lease. Claim, create and rescue pick their runs
// themselves and are tested on their own.
func opCases() []opCase {
	return []opCase{
		{"pause-gate", db.OpPause, db.StatusPaused, []db.EventType{db.EventGateRequested}, "review",
			func(e *env, _ db.Run, l db.Lease) (db.Run, error) {
				return e.s.PauseRun(e.ctx, l, gatePause(db.PauseApproval))
			}},
		{"pause-recovery", db.OpPause, db.StatusPaused, []db.EventType{db.EventRunPaused}, "plan",
			func(e *env, _ db.Run, l db.Lease) (db.Run, error) { return e.s.PauseRun(e.ctx, l, recoveryPause) }},
		{"complete", db.OpComplete, db.StatusCompleted, []db.EventType{db.EventRunCompleted}, "",
			func(e *env, _ db.Run, l db.Lease) (db.Run, error) { return e.s.CompleteRun(e.ctx, l, "all green") }},
		{"fail", db.OpFail, db.StatusFailed, []db.EventType{db.EventRunFailed}, "test",
			func(e *env, _ db.Run, l db.Lease) (db.Run, error) {
				return e.s.FailRun(e.ctx, l, db.RunError{Node: "test", Class: db.ClassPermanent, Message: "exit 2"})
			}},
		{"release", db.OpRelease, db.StatusQueued, []db.EventType{db.EventRunReleased}, "",
			func(e *env, _ db.Run, l db.Lease) (db.Run, error) { return e.s.ReleaseRun(e.ctx, l) }},
		{"resume", db.OpResume, db.StatusQueued, []db.EventType{db.EventResumeRequested}, "",
			func(e *env, r db.Run, _ db.Lease) (db.Run, error) {
				return e.s.ResumeRun(e.ctx, r.ID, db.Actor{ID: "slack:U2"})
			}},
		{"approve", db.OpApprove, db.StatusQueued, []db.EventType{db.EventGateResolved}, "review",
			func(e *env, r db.Run, _ db.Lease) (db.Run, error) {
				return answerRun(e, db.GateResolution{RunID: r.ID, Node: "review", Decision: db.DecisionApprove, By: "slack:U2"})
			}},
		{"answer", db.OpApprove, db.StatusQueued, []db.EventType{db.EventGateResolved}, "review",
			func(e *env, r db.Run, _ db.Lease) (db.Run, error) {
				return answerRun(e, db.GateResolution{RunID: r.ID, Decision: db.DecisionAnswer, By: "slack:U2", Text: "more tests"})
			}},
		{"reject", db.OpReject, db.StatusCancelled, []db.EventType{db.EventGateResolved, db.EventRunCancelled}, "review",
			func(e *env, r db.Run, _ db.Lease) (db.Run, error) {
				return answerRun(e, db.GateResolution{RunID: r.ID, Node: "review", Decision: db.DecisionReject, By: "slack:U2", Text: "no"})
			}},
		{"cancel", db.OpCancel, db.StatusCancelled, []db.EventType{db.EventRunCancelled}, "",
			func(e *env, r db.Run, _ db.Lease) (db.Run, error) {
				return e.s.CancelRun(e.ctx, r.ID, db.Actor{ID: "slack:U2"}, "changed my mind")
			}},
	}
}

// outcome is what the table expects of one operation on one fixture.
type outcome int

const (
	refused  outcome = iota // *TransitionError with the fixture's status
	moved                   // the transition happens
	replayed                // a worker's committed write retried: nil error, nothing changes
)

// expect derives the outcome from db.Transitions plus the pause-kind and lease refinements the
// contract documents, so the table cannot disagree with the state machine.
func expect(f fixture, c opCase) outcome {
	tr := db.Transitions[c.op]
	if tr.Lease && f.status() == tr.To && holdsLease(f) {
		return replayed
	}
	if !c.op.Allows(f.status()) {
		return refused
	}
	switch {
	case c.op == db.OpResume && f.status() == db.StatusPaused:
		return outcomeIf(f == fxRecovery)
	case c.op == db.OpApprove || c.op == db.OpReject:
		return outcomeIf(f == fxApproval || f == fxLoop)
	}
	return moved
}

// holdsLease reports whether the fixture's run still carries its worker's lease token: complete,
// fail and pause keep it so the worker can replay them.
func holdsLease(f fixture) bool {
	switch f {
	case fxRunning, fxApproval, fxLoop, fxRecovery, fxFailed, fxCompleted:
		return true
	}
	return false
}

func outcomeIf(ok bool) outcome {
	if ok {
		return moved
	}
	return refused
}

func transitionTests() []test {
	return []test{
		{"TableAllStatusesAllOps", testTransitionTable},
		{"ClaimOldestQueued", testClaimOldestQueued},
		{"ClaimNothingQueued", testClaimNothingQueued},
		{"ClaimOnlyReportablePlatforms", testClaimOnlyReportablePlatforms},
		{"PauseRecoveryRecordsHint", testPauseRecovery},
		{"CompleteAndFailKeepLeaseToken", testFinishKeepsToken},
		{"ReleaseKeepsRecoveries", testRelease},
		{"ResumeFailed", testResumeFailed},
		{"ResumeGatePausedRefused", testResumeGateRefused},
		{"CancelClearsLease", testCancelClearsLease},
		{"TerminalAbsorbing", testTerminalAbsorbing},
		{"UnknownRun", testUnknownRun},
	}
}

// testTransitionTable drives every operation from every state and checks the status after, the
// events appended, and the error of every refused operation.
func testTransitionTable(t *testing.T, e *env) {
	for _, f := range allFixtures {
		for _, c := range opCases() {
			t.Run(string(f)+"/"+c.name, func(t *testing.T) {
				r, l := e.runIn(t, f, nil)
				defer e.retire(t, r.ID)
				if l.Token == "" {
					l = db.Lease{RunID: r.ID, Owner: worker, Token: db.NewToken()}
				}
				before := e.events(t, r.ID)
				got, err := c.call(e, r, l)
				checkOutcome(t, e, expect(f, c), f, c, r, before, got, err)
			})
		}
	}
}

func checkOutcome(t *testing.T, e *env, want outcome, f fixture, c opCase, r db.Run, before []db.Event, got db.Run, err error) {
	t.Helper()
	after := e.events(t, r.ID)
	switch want {
	case refused:
		wantTransitionError(t, err, r.ID, f.status(), db.Transitions[c.op].Lease)
		if te := (*db.TransitionError)(nil); errors.As(err, &te) && te.Op != c.op {
			t.Fatalf("refused %s reports op %q, want %q", c.name, te.Op, c.op)
		}
		if len(after) != len(before) {
			t.Fatalf("refused %s appended %d events", c.name, len(after)-len(before))
		}
		if s := e.get(t, r.ID).Status; s != f.status() {
			t.Fatalf("refused %s changed status %s -> %s", c.name, f.status(), s)
		}
	case replayed:
		if err != nil {
			t.Fatalf("replayed %s on %s run: %v, want nil", c.name, f, err)
		}
		if len(after) != len(before) || got.Status != f.status() {
			t.Fatalf("replayed %s: status %s, %d new events; want %s and none", c.name, got.Status, len(after)-len(before), f.status())
		}
	case moved:
		if err != nil {
			t.Fatalf("%s on %s run: %v", c.name, f, err)
		}
		if got.Status != c.to || e.get(t, r.ID).Status != c.to {
			t.Fatalf("%s on %s run: status %s, want %s", c.name, f, got.Status, c.to)
		}
		added := after[len(before):]
		if len(added) != len(c.events) {
			t.Fatalf("%s appended %v, want %v", c.name, types(added), c.events)
		}
		for i, ev := range added {
			if ev.Type != c.events[i] || !ev.At.Equal(e.clock.Now()) {
				t.Fatalf("%s appended %s at %v, want %s at %v", c.name, ev.Type, ev.At, c.events[i], e.clock.Now())
			}
		}
		if added[0].NodeID != c.node {
			t.Fatalf("%s event node %q, want %q", c.name, added[0].NodeID, c.node)
		}
	}
}

func types(evs []db.Event) []db.EventType {
	out := make([]db.EventType, len(evs))
	for i, ev := range evs {
		out[i] = ev.Type
	}
	return out
}
