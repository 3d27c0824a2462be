package storetest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"threadflow/db"
)

func leaseTests() []test {
	return []test{
		{"HeartbeatExtends", testHeartbeatExtends},
		{"HeartbeatWrongToken", testHeartbeatWrongToken},
		{"RenewLeasesBatch", testRenewLeasesBatch},
		{"StaleTokenAfterRescue", testStaleTokenAfterRescue},
		{"RescueOnlyExpired", testRescueOnlyExpired},
		{"NextLeaseExpiry", testNextLeaseExpiry},
		{"RescueBudgetExhausted", testRescueBudget},
		{"NodeCompletedResetsRecoveries", testProgressResetsRecoveries},
		{"ReplayedCompleteIsNoop", testReplayedComplete},
		{"RecordEventNeedsLease", testRecordEventNeedsLease},
	}
}

// expireAndRescue moves the clock past every lease taken so far and runs the rescuer.
func (e *env) expireAndRescue(t *testing.T, maxRecoveries int) []db.Rescue {
	t.Helper()
	e.clock.Advance(leaseTTL + time.Second)
	res, err := e.s.RescueExpired(e.ctx, maxRecoveries)
	if err != nil {
		t.Fatalf("RescueExpired: %v", err)
	}
	return res
}

func testHeartbeatExtends(t *testing.T, e *env) {
	r, l := e.runIn(t, fxRunning, nil)
	for range 3 {
		e.clock.Advance(leaseTTL - time.Second)
		if err := e.s.Heartbeat(e.ctx, l, leaseTTL); err != nil {
			t.Fatalf("Heartbeat: %v", err)
		}
		got := e.get(t, r.ID)
		if !got.LeaseExpiresAt.Equal(e.clock.Now().Add(leaseTTL)) || !got.HeartbeatAt.Equal(e.clock.Now()) {
			t.Fatalf("after heartbeat: expires %v heartbeat %v, now %v", got.LeaseExpiresAt, got.HeartbeatAt, e.clock.Now())
		}
		if res, err := e.s.RescueExpired(e.ctx, 3); err != nil || len(res) != 0 {
			t.Fatalf("RescueExpired took a heartbeating run: %+v, %v", res, err)
		}
	}
}

func testHeartbeatWrongToken(t *testing.T, e *env) {
	_, l := e.runIn(t, fxRunning, nil)
	l.Token = db.NewToken()
	err := e.s.Heartbeat(e.ctx, l, leaseTTL)
	wantTransitionError(t, err, l.RunID, db.StatusRunning, true)
	if err := e.s.Heartbeat(e.ctx, db.Lease{RunID: "zzzzzzzzzz", Token: l.Token}, leaseTTL); !errors.Is(err, db.ErrLeaseLost) && !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("Heartbeat of unknown run: %v, want ErrLeaseLost or ErrNotFound", err)
	}
}

// testRenewLeasesBatch: one renewal extends every held lease and names, without writing, the ones
// that are gone: a stale token, a run that paused, a run that does not exist.
func testRenewLeasesBatch(t *testing.T, e *env) {
	a, la := e.runIn(t, fxRunning, nil)
	b, lb := e.runIn(t, fxRunning, nil)
	_, stale := e.runIn(t, fxRunning, nil)
	stale.Token = db.NewToken()
	paused, lp := e.runIn(t, fxApproval, nil)
	before := e.get(t, paused.ID)
	missing := db.Lease{RunID: "zzzzzzzzzz", Token: db.NewToken()}
	e.clock.Advance(leaseTTL - time.Second)
	lost, err := e.s.RenewLeases(e.ctx, []db.Lease{la, stale, lb, lp, missing}, leaseTTL)
	if err != nil {
		t.Fatalf("RenewLeases: %v", err)
	}
	if len(lost) != 3 || lost[0] != stale || lost[1] != lp || lost[2] != missing {
		t.Fatalf("lost %+v, want the stale, paused and missing leases in the order given", lost)
	}
	for _, id := range []string{a.ID, b.ID} {
		if got := e.get(t, id); !got.LeaseExpiresAt.Equal(e.clock.Now().Add(leaseTTL)) || !got.HeartbeatAt.Equal(e.clock.Now()) {
			t.Fatalf("run %s after renewal: expires %v heartbeat %v, now %v", id, got.LeaseExpiresAt, got.HeartbeatAt, e.clock.Now())
		}
	}
	if got := e.get(t, paused.ID); got.Status != db.StatusPaused || !got.LeaseExpiresAt.Equal(before.LeaseExpiresAt) {
		t.Fatalf("a lost lease was written: paused run now %s, expires %v (was %v)", got.Status, got.LeaseExpiresAt, before.LeaseExpiresAt)
	}
	e.clock.Advance(2 * time.Second) // past the stale run's unrenewed lease, within the renewed ones
	if res, err := e.s.RescueExpired(e.ctx, 3); err != nil || len(res) != 1 {
		t.Fatalf("RescueExpired after renewal: %+v, %v; want only the run whose token was stale", res, err)
	}
	if lost, err := e.s.RenewLeases(e.ctx, make([]db.Lease, db.MaxRenewBatch), leaseTTL); err != nil || len(lost) != db.MaxRenewBatch {
		t.Fatalf("a renewal of %d unknown leases = lost %d, %v; want all lost and no error", db.MaxRenewBatch, len(lost), err)
	}
	n := db.MaxRenewBatch + 1
	if _, err := e.s.RenewLeases(e.ctx, make([]db.Lease, n), leaseTTL); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("at most %d leases", db.MaxRenewBatch)) {
		t.Fatalf("a renewal of %d leases gave %v, want an error naming the bound of %d", n, err, db.MaxRenewBatch)
	}
}

// testStaleTokenAfterRescue is the split-brain case: a worker that stalled past its lease must not
// write over the worker that re-claimed the run.
func testStaleTokenAfterRescue(t *testing.T, e *env) {
	r, old := e.runIn(t, fxRunning, nil)
	if res := e.expireAndRescue(t, 3); len(res) != 1 || res[0].Run.ID != r.ID || res[0].PrevOwner != worker {
		t.Fatalf("RescueExpired = %+v, want run %s rescued from %s", res, r.ID, worker)
	}
	fresh := e.claim(t, r.ID).Lease()
	if fresh.Token == old.Token {
		t.Fatal("re-claim reused the old lease token")
	}
	_, err := e.s.RecordEvent(e.ctx, old, db.Event{Type: db.EventNodeStarted, NodeID: "build"})
	wantTransitionError(t, err, r.ID, db.StatusRunning, true)
	_, err = e.s.CompleteRun(e.ctx, old, "stale")
	wantTransitionError(t, err, r.ID, db.StatusRunning, true)
	_, err = e.s.FailRun(e.ctx, old, db.RunError{Message: "stale"})
	wantTransitionError(t, err, r.ID, db.StatusRunning, true)
	if _, err := e.s.RecordEvent(e.ctx, fresh, db.Event{Type: db.EventNodeStarted, NodeID: "build"}); err != nil {
		t.Fatalf("new lease holder cannot write: %v", err)
	}
	if got, err := e.s.CompleteRun(e.ctx, fresh, "ok"); err != nil || got.Meta.Output != "ok" {
		t.Fatalf("CompleteRun with the new lease: %v (output %q)", err, got.Meta.Output)
	}
}

// testNextLeaseExpiry: the rescuer's next look is the earliest lease of a running run not yet past;
// paused, queued and finished runs hold none, and a lease already past is the rescue's, not a wait.
func testNextLeaseExpiry(t *testing.T, e *env) {
	want := func(at time.Time, ok bool) {
		t.Helper()
		next, found, err := e.s.NextLeaseExpiry(e.ctx)
		if err != nil || found != ok || !next.Equal(at) {
			t.Fatalf("NextLeaseExpiry = %v, %v, %v; want %v, %v", next, found, err, at, ok)
		}
	}
	want(time.Time{}, false)
	e.runIn(t, fxApproval, nil)
	e.runIn(t, fxCompleted, nil)
	want(time.Time{}, false)
	first, _ := e.runIn(t, fxRunning, nil)
	e.clock.Advance(time.Second)
	second, _ := e.runIn(t, fxRunning, nil)
	e.runIn(t, fxQueued, nil) // last: claims take the oldest queued run
	want(first.LeaseExpiresAt, true)
	e.clock.Advance(leaseTTL - time.Second) // now is the first lease's expiry: it is not past yet
	want(first.LeaseExpiresAt, true)
	e.clock.Advance(time.Microsecond)
	want(second.LeaseExpiresAt, true)
	e.clock.Advance(time.Second)
	want(time.Time{}, false)
}

func testRescueOnlyExpired(t *testing.T, e *env) {
	r, _ := e.runIn(t, fxRunning, nil)
	e.clock.Advance(leaseTTL)
	if res, err := e.s.RescueExpired(e.ctx, 3); err != nil || len(res) != 0 {
		t.Fatalf("RescueExpired at the exact expiry: %+v, %v; want nothing (expired means before now)", res, err)
	}
	e.clock.Advance(time.Microsecond)
	res, err := e.s.RescueExpired(e.ctx, 3)
	if err != nil || len(res) != 1 || res[0].Exhausted {
		t.Fatalf("RescueExpired after expiry: %+v, %v", res, err)
	}
	got := res[0].Run
	if got.Status != db.StatusQueued || got.Recoveries != 1 || got.LeaseToken != "" || got.LeaseOwner != "" || !got.LeaseExpiresAt.IsZero() {
		t.Fatalf("rescued run: %s recoveries %d owner %q token %q expires %v", got.Status, got.Recoveries, got.LeaseOwner, got.LeaseToken, got.LeaseExpiresAt)
	}
	if e.get(t, r.ID).Recoveries != 1 {
		t.Fatal("rescue did not store the recovery counter")
	}
	ev := e.last(t, r.ID)
	if ev.Type != db.EventRunRescued || dataField(t, ev, "prev_owner") != worker || dataField(t, ev, "recoveries") != float64(1) {
		t.Fatalf("rescue appended %s %s, want run_rescued with prev_owner and recoveries", ev.Type, ev.Data)
	}
}

func testRescueBudget(t *testing.T, e *env) {
	const budget = 2
	r := e.create(t, nil)
	for i := 1; i <= budget; i++ {
		e.claim(t, r.ID)
		if res := e.expireAndRescue(t, budget); len(res) != 1 || res[0].Exhausted || res[0].Run.Recoveries != i {
			t.Fatalf("rescue %d: %+v, want a re-queue with %d recoveries", i, res, i)
		}
	}
	e.claim(t, r.ID)
	res := e.expireAndRescue(t, budget)
	if len(res) != 1 || !res[0].Exhausted || res[0].Run.Status != db.StatusFailed {
		t.Fatalf("rescue past the budget: %+v, want the run failed and Exhausted", res)
	}
	got := e.get(t, r.ID)
	le := got.Meta.LastError
	if le == nil || le.Class != db.ClassBudget || !strings.Contains(le.Message, "3") {
		t.Fatalf("exhausted run last error %+v, want class %s with a message naming the 3 rescues", le, db.ClassBudget)
	}
	if ev := e.last(t, r.ID); ev.Type != db.EventRunFailed {
		t.Fatalf("exhausted rescue appended %s, want run_failed", ev.Type)
	}
	if _, err := e.s.ResumeRun(e.ctx, r.ID, db.Actor{ID: "slack:U2"}); err != nil {
		t.Fatalf("a run failed by the rescue budget must stay resumable: %v", err)
	}
}

func testProgressResetsRecoveries(t *testing.T, e *env) {
	r := e.create(t, nil)
	e.claim(t, r.ID)
	e.expireAndRescue(t, 1)
	l := e.claim(t, r.ID).Lease()
	if got := e.get(t, r.ID).Recoveries; got != 1 {
		t.Fatalf("recoveries after one rescue: %d", got)
	}
	if _, err := e.s.RecordEvent(e.ctx, l, db.Event{Type: db.EventNodeStarted, NodeID: "build"}); err != nil {
		t.Fatalf("RecordEvent: %v", err)
	}
	if got := e.get(t, r.ID).Recoveries; got != 1 {
		t.Fatalf("node_started reset recoveries to %d; only completion is progress", got)
	}
	if _, err := e.s.RecordEvent(e.ctx, l, db.Event{Type: db.EventNodeCompleted, NodeID: "build"}); err != nil {
		t.Fatalf("RecordEvent: %v", err)
	}
	if got := e.get(t, r.ID).Recoveries; got != 0 {
		t.Fatalf("recoveries after node_completed: %d, want 0", got)
	}
	// With the counter reset, one more rescue fits in a budget of 1 again.
	if res := e.expireAndRescue(t, 1); len(res) != 1 || res[0].Exhausted {
		t.Fatalf("rescue after progress: %+v, want a re-queue", res)
	}
}

func testReplayedComplete(t *testing.T, e *env) {
	r, l := e.runIn(t, fxRunning, nil)
	first, err := e.s.CompleteRun(e.ctx, l, "done")
	if err != nil {
		t.Fatalf("CompleteRun: %v", err)
	}
	e.clock.Advance(time.Second)
	again, err := e.s.CompleteRun(e.ctx, l, "done")
	if err != nil {
		t.Fatalf("replayed CompleteRun with the same lease: %v, want nil", err)
	}
	if again.Status != db.StatusCompleted || !again.FinishedAt.Equal(first.FinishedAt) {
		t.Fatalf("replay changed the run: %s finished %v, first finished %v", again.Status, again.FinishedAt, first.FinishedAt)
	}
	if n := e.countEvents(t, r.ID, db.EventRunCompleted); n != 1 {
		t.Fatalf("%d run_completed events, want 1", n)
	}
	other := db.Lease{RunID: r.ID, Owner: "worker-2", Token: db.NewToken()}
	_, err = e.s.CompleteRun(e.ctx, other, "done")
	wantTransitionError(t, err, r.ID, db.StatusCompleted, true)
}

func testRecordEventNeedsLease(t *testing.T, e *env) {
	r, _ := e.runIn(t, fxRunning, nil)
	for _, bad := range []db.Lease{
		{RunID: r.ID, Owner: worker, Token: db.NewToken()},
		{RunID: r.ID, Owner: worker, Token: ""},
	} {
		_, err := e.s.RecordEvent(e.ctx, bad, db.Event{Type: db.EventSessionReset, NodeID: "plan"})
		wantTransitionError(t, err, r.ID, db.StatusRunning, true)
	}
	q, _ := e.runIn(t, fxQueued, nil)
	_, err := e.s.RecordEvent(e.ctx, db.Lease{RunID: q.ID, Token: ""}, db.Event{Type: db.EventSessionReset})
	wantTransitionError(t, err, q.ID, db.StatusQueued, true)
	if n := len(e.events(t, r.ID)); n != 2 {
		t.Fatalf("rejected writes appended events: %d events, want 2 (%s)", n, fmt.Sprint(types(e.events(t, r.ID))))
	}
}
