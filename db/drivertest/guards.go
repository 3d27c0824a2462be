package drivertest

import (
	"strings"
	"testing"
	"time"

	"threadflow/db"
)

// testGuards runs each guard field of RunUpdate, matching and missing, through the engine's
// UpdateRun: a miss changes nothing, a match writes what the model says, and the engine agrees
// with the model on which is which.
func testGuards(t *testing.T, e *env) {
	running := e.claimed(t)
	paused := e.claimed(t)
	if _, err := e.s.PauseRun(e.ctx, paused.Lease(), db.Pause{Kind: db.PauseApproval, Node: "review"}); err != nil {
		t.Fatal(err)
	}
	failed := e.claimed(t)
	if _, err := e.s.FailRun(e.ctx, failed.Lease(), db.RunError{Class: db.ClassPermanent, Message: "exit 1"}); err != nil {
		t.Fatal(err)
	}
	queued := e.create(t) // last: claimed takes the oldest queued run
	expiry := running.LeaseExpiresAt
	for _, tc := range []struct {
		name string
		u    db.RunUpdate
		want bool
	}{
		{"its status", db.RunUpdate{RunID: queued.ID, From: []db.Status{db.StatusQueued}}, true},
		{"another status", db.RunUpdate{RunID: queued.ID, From: []db.Status{db.StatusRunning, db.StatusPaused}}, false},
		{"no such run", db.RunUpdate{RunID: "no-such-run", From: []db.Status{db.StatusQueued}}, false},
		{"its lease", db.RunUpdate{RunID: running.ID, From: []db.Status{db.StatusRunning}, Leased: true, Token: running.LeaseToken}, true},
		{"another lease", db.RunUpdate{RunID: running.ID, From: []db.Status{db.StatusRunning}, Leased: true, Token: "other"}, false},
		{"an empty token matches no lease", db.RunUpdate{RunID: queued.ID, From: []db.Status{db.StatusQueued}, Leased: true}, false},
		{"a pause kind, of a run not paused", db.RunUpdate{RunID: failed.ID, From: []db.Status{db.StatusFailed, db.StatusPaused},
			IfPaused: []db.PauseKind{db.PauseRecovery}}, true},
		{"another pause kind", db.RunUpdate{RunID: paused.ID, From: []db.Status{db.StatusFailed, db.StatusPaused},
			IfPaused: []db.PauseKind{db.PauseRecovery}}, false},
		{"its pause kind", db.RunUpdate{RunID: paused.ID, From: []db.Status{db.StatusPaused},
			IfPaused: []db.PauseKind{db.PauseApproval, db.PauseLoop}}, true},
		{"its pause node", db.RunUpdate{RunID: paused.ID, From: []db.Status{db.StatusPaused}, PauseNode: "review"}, true},
		{"another pause node", db.RunUpdate{RunID: paused.ID, From: []db.Status{db.StatusPaused}, PauseNode: "deploy"}, false},
		{"an expired lease", db.RunUpdate{RunID: running.ID, From: []db.Status{db.StatusRunning}, Leased: true, Token: running.LeaseToken,
			ExpiredBefore: expiry.Add(time.Second)}, true},
		{"a lease expiring just then", db.RunUpdate{RunID: running.ID, From: []db.Status{db.StatusRunning}, Leased: true,
			Token: running.LeaseToken, ExpiredBefore: expiry}, false},
		{"another rescue count", db.RunUpdate{RunID: running.ID, From: []db.Status{db.StatusRunning}, Leased: true,
			Token: running.LeaseToken, ExpiredBefore: expiry.Add(time.Second), Recoveries: 1}, false},
		{"no lease expiry", db.RunUpdate{RunID: paused.ID, From: []db.Status{db.StatusPaused}, ExpiredBefore: expiry.Add(time.Hour)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e.clock.Advance(time.Second)
			tc.u.Set = db.RunSet{HeartbeatAt: e.clock.Now()} // a write that leaves every guard as it was
			before, found := e.find(t, tc.u.RunID)
			if model := matches(before, found, tc.u); model != tc.want {
				t.Fatalf("the model says %v, the case %v: fix the case", model, tc.want)
			}
			got, ok := e.update(t, tc.u)
			if ok != tc.want {
				t.Fatalf("UpdateRun matched %v, want %v", ok, tc.want)
			}
			if !found {
				return
			}
			after := e.get(t, tc.u.RunID)
			want := before
			if ok {
				want = apply(before, tc.u.Set)
				if d := diff(want, got); len(d) > 0 {
					t.Errorf("the returned run differs from the model:\n  %s", strings.Join(d, "\n  "))
				}
			}
			if d := diff(want, after); len(d) > 0 {
				t.Errorf("the stored run differs from the model:\n  %s", strings.Join(d, "\n  "))
			}
		})
	}
}

// claimed creates a run and claims it.
func (e *env) claimed(t *testing.T) db.Run {
	t.Helper()
	id := e.create(t).ID
	r, err := e.s.ClaimRun(e.ctx, owner, ttl, db.Reach{})
	if err != nil || r.ID != id {
		t.Fatalf("ClaimRun = %s, %v; want %s", r.ID, err, id)
	}
	return r
}

// find reads a run; found is false when there is none.
func (e *env) find(t *testing.T, id string) (db.Run, bool) {
	t.Helper()
	r, err := e.s.GetRun(e.ctx, id)
	if err != nil {
		return db.Run{}, false
	}
	return r, true
}
