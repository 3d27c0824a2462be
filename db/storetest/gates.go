package storetest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"threadflow/db"
)

func gateTests() []test {
	return []test{
		{"ResolveTwice", testResolveTwice},
		{"RejectCancels", testRejectCancels},
		{"AnswerRecordsText", testAnswer},
		{"WrongNodeRefused", testWrongNode},
		{"SameGateAskedAgain", testGateAskedAgain},
		{"ConcurrentResolutions", testConcurrentResolve},
	}
}

func resolve(e *env, id string, d db.GateDecision, by string) (db.Run, error) {
	return answerRun(e, db.GateResolution{RunID: id, Node: "review", Decision: d, By: by, Text: "because"})
}

// answerRun answers a gate and returns the run as the answer left it.
func answerRun(e *env, g db.GateResolution) (db.Run, error) {
	res, err := e.s.ResolveGate(e.ctx, g)
	return res.Run, err
}

// wantResolvedBy checks err reports the gate as already answered with d by by.
func wantResolvedBy(t *testing.T, err error, id string, d db.GateDecision, by string) {
	t.Helper()
	var ge *db.GateResolvedError
	if !errors.As(err, &ge) {
		t.Fatalf("got %v, want *db.GateResolvedError", err)
	}
	if ge.RunID != id || ge.Node != "review" || ge.Decision != d || ge.By != by || ge.At.IsZero() {
		t.Fatalf("got %+v, want run %s gate review answered %s by %s", ge, id, d, by)
	}
	if !errors.Is(err, db.ErrInvalidTransition) {
		t.Fatalf("%v does not match ErrInvalidTransition", err)
	}
}

func testResolveTwice(t *testing.T, e *env) {
	r, _ := e.runIn(t, fxApproval, nil)
	at := e.clock.Now().Add(time.Minute)
	e.clock.Advance(time.Minute)
	if _, err := resolve(e, r.ID, db.DecisionApprove, "slack:alice"); err != nil {
		t.Fatalf("first approval: %v", err)
	}
	e.clock.Advance(time.Minute)
	_, err := resolve(e, r.ID, db.DecisionReject, "slack:bob")
	wantResolvedBy(t, err, r.ID, db.DecisionApprove, "slack:alice")
	var ge *db.GateResolvedError
	if errors.As(err, &ge) && !ge.At.Equal(at) {
		t.Fatalf("GateResolvedError.At = %v, want the first answer's time %v", ge.At, at)
	}
	// Still true once a worker picked the run up again.
	e.claim(t, r.ID)
	_, err = resolve(e, r.ID, db.DecisionApprove, "slack:carol")
	wantResolvedBy(t, err, r.ID, db.DecisionApprove, "slack:alice")
	if n := e.countEvents(t, r.ID, db.EventGateResolved); n != 1 {
		t.Fatalf("%d gate_resolved events, want 1", n)
	}
}

func testRejectCancels(t *testing.T, e *env) {
	r, _ := e.runIn(t, fxApproval, nil)
	got, err := resolve(e, r.ID, db.DecisionReject, "slack:bob")
	if err != nil || got.Status != db.StatusCancelled || !got.FinishedAt.Equal(e.clock.Now()) {
		t.Fatalf("reject: %v, status %s finished %v", err, got.Status, got.FinishedAt)
	}
	evs := e.events(t, r.ID)
	res := evs[len(evs)-2]
	if res.Type != db.EventGateResolved || dataField(t, res, "decision") != "reject" || dataField(t, res, "by") != "slack:bob" || dataField(t, res, "text") != "because" {
		t.Fatalf("reject recorded %s %s", res.Type, res.Data)
	}
	_, err = resolve(e, r.ID, db.DecisionApprove, "slack:alice")
	wantResolvedBy(t, err, r.ID, db.DecisionReject, "slack:bob")
}

func testAnswer(t *testing.T, e *env) {
	r, _ := e.runIn(t, fxLoop, nil)
	got, err := answerRun(e, db.GateResolution{RunID: r.ID, Decision: db.DecisionAnswer, By: "slack:U1", Text: "add tests"})
	if err != nil || got.Status != db.StatusQueued {
		t.Fatalf("answer: %v, status %s", err, got.Status)
	}
	ev := e.last(t, r.ID)
	if ev.NodeID != "review" || dataField(t, ev, "decision") != "answer" || dataField(t, ev, "text") != "add tests" {
		t.Fatalf("answer recorded %s node %q %s", ev.Type, ev.NodeID, ev.Data)
	}
}

func testWrongNode(t *testing.T, e *env) {
	r, _ := e.runIn(t, fxApproval, nil)
	_, err := e.s.ResolveGate(e.ctx, db.GateResolution{RunID: r.ID, Node: "deploy", Decision: db.DecisionApprove, By: "slack:U1"})
	wantTransitionError(t, err, r.ID, db.StatusPaused, false)
	if got := e.get(t, r.ID); got.Status != db.StatusPaused || e.countEvents(t, r.ID, db.EventGateResolved) != 0 {
		t.Fatalf("answering another gate changed the run: %s", got.Status)
	}
	rec, _ := e.runIn(t, fxRecovery, nil)
	_, err = e.s.ResolveGate(e.ctx, db.GateResolution{RunID: rec.ID, Decision: db.DecisionApprove, By: "slack:U1"})
	wantTransitionError(t, err, rec.ID, db.StatusPaused, false)
}

// testGateAskedAgain: a loop asks the same gate every iteration; each ask takes one answer.
func testGateAskedAgain(t *testing.T, e *env) {
	r, _ := e.runIn(t, fxLoop, nil)
	for i := range 3 {
		if _, err := resolve(e, r.ID, db.DecisionAnswer, "slack:U1"); err != nil {
			t.Fatalf("answer %d: %v", i, err)
		}
		l := e.claim(t, r.ID).Lease()
		must(t)(e.s.PauseRun(e.ctx, l, gatePause(db.PauseLoop)))
	}
	if n := e.countEvents(t, r.ID, db.EventGateResolved); n != 3 {
		t.Fatalf("%d gate_resolved events, want 3", n)
	}
}

func testConcurrentResolve(t *testing.T, e *env) {
	r, _ := e.runIn(t, fxApproval, nil)
	decisions := []db.GateDecision{db.DecisionApprove, db.DecisionReject}
	const n = 8
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { _, errs[i] = resolve(e, r.ID, decisions[i%2], "slack:U"+string(rune('a'+i))) })
	}
	wg.Wait()
	winner := -1
	for i, err := range errs {
		if err == nil {
			if winner >= 0 {
				t.Fatalf("gate answered twice: by %d and %d", winner, i)
			}
			winner = i
		}
	}
	if winner < 0 {
		t.Fatalf("no resolution won: %v", errs)
	}
	for i, err := range errs {
		if i != winner {
			wantResolvedBy(t, err, r.ID, decisions[winner%2], "slack:U"+string(rune('a'+winner)))
		}
	}
}
