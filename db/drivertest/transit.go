package drivertest

import (
	"encoding/json"
	"testing"

	"threadflow/db"
)

// testTransitAll: the compare-and-sets of one TransitAll that match move their runs and append
// their events at the runs' next seqs; one whose guard fails changes nothing and appends nothing.
func testTransitAll(t *testing.T, e *env) {
	moved, refused := e.create(t), e.create(t)
	now := e.clock.Now()
	claim := func(id string, from db.Status) db.Transit {
		return db.Transit{
			Update: db.RunUpdate{RunID: id, From: []db.Status{from}, Set: db.RunSet{Status: db.StatusRunning,
				Lease: &db.Lease{Owner: owner, Token: db.NewToken()}, ExpiresAt: now.Add(ttl)}},
			Events: []db.Event{{RunID: id, Type: db.EventRunClaimed, Data: json.RawMessage(`{"owner":"replica-a"}`), At: now},
				{RunID: id, Type: db.EventNodeStarted, NodeID: "n", Attempt: 1, Data: json.RawMessage(`{}`), At: now}},
		}
	}
	var (
		runs []db.Run
		ok   []bool
	)
	err := e.d.InTx(e.ctx, func(tx db.DriverTx) error {
		var err error
		runs, ok, err = tx.TransitAll(e.ctx, []db.Transit{claim(moved.ID, db.StatusQueued), claim(refused.ID, db.StatusPaused)})
		return err
	})
	if err != nil || !ok[0] || ok[1] || runs[0].Status != db.StatusRunning || runs[0].LeaseOwner != owner {
		t.Fatalf("TransitAll = %+v, %v, %v; want the first moved to running and the second refused", runs, ok, err)
	}
	evs, err := e.s.Events(e.ctx, moved.ID)
	if err != nil || len(evs) != 3 || evs[1].Type != db.EventRunClaimed || evs[1].Seq != 2 || evs[2].Type != db.EventNodeStarted ||
		evs[2].Seq != 3 || evs[2].NodeID != "n" || evs[2].Attempt != 1 || !jsonEqual(evs[1].Data, []byte(`{"owner":"replica-a"}`)) ||
		!evs[1].At.Equal(now) {
		t.Fatalf("events of the moved run = %+v, %v; want run_created, run_claimed (2), node_started n/1 (3)", evs, err)
	}
	if evs, err := e.s.Events(e.ctx, refused.ID); err != nil || len(evs) != 1 {
		t.Fatalf("events of the refused run = %+v, %v; want only run_created", evs, err)
	}
	if r := e.get(t, refused.ID); r.Status != db.StatusQueued {
		t.Fatalf("the refused run is %s, want it still queued", r.Status)
	}
	// The moved run's next event continues after the two it got.
	if ev, err := e.s.RecordEvent(e.ctx, runs[0].Lease(), db.Event{Type: db.EventNodeCompleted, NodeID: "n", Attempt: 1}); err != nil || ev.Seq != 4 {
		t.Fatalf("next event = seq %d, %v; want 4", ev.Seq, err)
	}
}
