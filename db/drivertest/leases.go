package drivertest

import (
	"slices"
	"testing"
	"time"

	"threadflow/db"
)

// testRenewLeases: one renewal extends every lease of a running run it is handed and reports, in
// order and without writing them, the ones that are not held: another token, a run that left
// running, a run that does not exist.
func testRenewLeases(t *testing.T, e *env) {
	r1, r2, gone := e.claimed(t), e.claimed(t), e.claimed(t)
	if _, err := e.s.ReleaseRun(e.ctx, gone.Lease()); err != nil {
		t.Fatal(err)
	}
	stale := r1.Lease()
	stale.Token = "stale"
	missing := db.Lease{RunID: "no-such-run", Owner: owner, Token: "t"}
	e.clock.Advance(time.Second)
	now := e.clock.Now()
	expires := now.Add(ttl)
	before := e.get(t, gone.ID)
	lost, err := e.d.RenewLeases(e.ctx, []db.Lease{r1.Lease(), stale, r2.Lease(), gone.Lease(), missing}, expires, now)
	if err != nil || !slices.Equal(lost, []db.Lease{stale, gone.Lease(), missing}) {
		t.Fatalf("RenewLeases lost %+v, %v; want the stale, the released and the missing lease, in order", lost, err)
	}
	for _, r := range []db.Run{r1, r2} {
		if got := e.get(t, r.ID); !got.LeaseExpiresAt.Equal(expires) || !got.HeartbeatAt.Equal(now) {
			t.Errorf("run %s: lease expires %v, heartbeat %v; want %v, %v", r.ID, got.LeaseExpiresAt, got.HeartbeatAt, expires, now)
		}
	}
	if d := diff(before, e.get(t, gone.ID)); len(d) > 0 {
		t.Errorf("a lost lease was written: %v", d)
	}
}

// testAppendLeased: an event is appended under a held lease only, a lifecycle event once per
// (type, node, attempt), other events every time; node_completed with reset sets the rescue
// counter back to 0; AppendLeasedAll tells which of its events it appended.
func testAppendLeased(t *testing.T, e *env) {
	r := e.rescuedOnce(t)
	l := r.Lease()
	ev := func(typ db.EventType, node string) db.Event {
		return db.Event{RunID: r.ID, Type: typ, NodeID: node, Attempt: 1, Data: []byte(`{}`), At: e.clock.Now()}
	}
	stale := l
	stale.Token = "stale"
	for _, tc := range []struct {
		name  string
		l     db.Lease
		e     db.Event
		reset bool
		want  bool
	}{
		{"a lifecycle event", l, ev(db.EventNodeStarted, "a"), false, true},
		{"its copy", l, ev(db.EventNodeStarted, "a"), false, false},
		{"another attempt's", l, db.Event{RunID: r.ID, Type: db.EventNodeStarted, NodeID: "a", Attempt: 2, Data: []byte(`{}`), At: e.clock.Now()}, false, true},
		{"an event that is not a lifecycle record", l, ev(db.EventSessionReset, "a"), false, true},
		{"the same again", l, ev(db.EventSessionReset, "a"), false, true},
		{"under a stale lease", stale, ev(db.EventNodeStarted, "b"), false, false},
		{"progress resets the rescue counter", l, ev(db.EventNodeCompleted, "a"), true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seq := lastSeq(t, e, r.ID)
			out, ok, err := e.d.AppendLeased(e.ctx, tc.l, tc.e, tc.reset)
			if err != nil || ok != tc.want {
				t.Fatalf("AppendLeased = %v, %v; want %v", ok, err, tc.want)
			}
			wantSeq := seq
			if ok {
				wantSeq++
				if out.Seq != wantSeq || out.Type != tc.e.Type || out.NodeID != tc.e.NodeID || !out.At.Equal(tc.e.At) {
					t.Errorf("appended %+v, want %s at seq %d", out, tc.e.Type, wantSeq)
				}
			}
			if got := lastSeq(t, e, r.ID); got != wantSeq {
				t.Errorf("the run's last event is seq %d, want %d", got, wantSeq)
			}
		})
	}
	if got := e.get(t, r.ID); got.Recoveries != 0 {
		t.Errorf("after node_completed with reset the rescue counter is %d, want 0", got.Recoveries)
	}
	outs, ok, err := e.d.AppendLeasedAll(e.ctx, l, []db.Event{ev(db.EventNodeStarted, "c"), ev(db.EventNodeStarted, "a")}, []bool{false, false})
	if err != nil || !slices.Equal(ok, []bool{true, false}) || outs[0].NodeID != "c" {
		t.Fatalf("AppendLeasedAll = %+v, %v, %v; want node c appended and a's copy not", outs, ok, err)
	}
}

// rescuedOnce is a running run that lost its worker once: its rescue counter is 1.
func (e *env) rescuedOnce(t *testing.T) db.Run {
	t.Helper()
	id := e.claimed(t).ID
	e.clock.Advance(2 * ttl)
	if res, err := e.s.RescueExpired(e.ctx, 3); err != nil || len(res) != 1 {
		t.Fatalf("RescueExpired = %+v, %v", res, err)
	}
	r, err := e.s.ClaimRun(e.ctx, owner, ttl, db.Reach{})
	if err != nil || r.ID != id || r.Recoveries != 1 {
		t.Fatalf("ClaimRun = %+v, %v; want %s with one rescue", r, err, id)
	}
	return r
}

func lastSeq(t *testing.T, e *env, id string) int64 {
	t.Helper()
	evs, err := e.s.Events(e.ctx, id)
	if err != nil || len(evs) == 0 {
		t.Fatalf("Events(%s) = %d, %v", id, len(evs), err)
	}
	return evs[len(evs)-1].Seq
}
