package storetest

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"threadflow/db"
)

func testClaimOldestQueued(t *testing.T, e *env) {
	first := e.create(t, nil)
	e.clock.Advance(time.Second)
	second := e.create(t, nil)
	e.clock.Advance(time.Second)

	r := e.claim(t, first.ID)
	now := e.clock.Now()
	if r.LeaseOwner != worker || r.LeaseToken == "" {
		t.Fatalf("claimed run has lease owner %q token %q, want %q and a token", r.LeaseOwner, r.LeaseToken, worker)
	}
	if !r.LeaseExpiresAt.Equal(now.Add(leaseTTL)) || !r.HeartbeatAt.Equal(now) || !r.StartedAt.Equal(now) {
		t.Fatalf("claimed run: expires %v heartbeat %v started %v, want %v, %v, %v",
			r.LeaseExpiresAt, r.HeartbeatAt, r.StartedAt, now.Add(leaseTTL), now, now)
	}
	ev := e.last(t, r.ID)
	if ev.Type != db.EventRunClaimed || dataField(t, ev, "owner") != worker {
		t.Fatalf("claim appended %s %s, want run_claimed with owner %s", ev.Type, ev.Data, worker)
	}
	if r2 := e.claim(t, second.ID); r2.LeaseToken == r.LeaseToken {
		t.Fatal("two claims got the same lease token")
	}
}

func testClaimNothingQueued(t *testing.T, e *env) {
	if _, err := e.s.ClaimRun(e.ctx, worker, leaseTTL, db.Reach{}); !errors.Is(err, db.ErrNoQueuedRun) {
		t.Fatalf("ClaimRun on empty store: %v, want ErrNoQueuedRun", err)
	}
	e.runIn(t, fxApproval, nil)
	e.runIn(t, fxFailed, nil)
	if _, err := e.s.ClaimRun(e.ctx, worker, leaseTTL, db.Reach{}); !errors.Is(err, db.ErrNoQueuedRun) {
		t.Fatalf("ClaimRun with only paused and failed runs: %v, want ErrNoQueuedRun", err)
	}
}

func testPauseRecovery(t *testing.T, e *env) {
	r, l := e.runIn(t, fxRecovery, nil)
	if r.Meta.Pause == nil || *r.Meta.Pause != recoveryPause {
		t.Fatalf("recovery pause stored as %+v, want %+v", r.Meta.Pause, recoveryPause)
	}
	if r.Meta.ResumeHint != recoveryPause.ResumeHint || r.Meta.LastError == nil || r.Meta.LastError.Message != recoveryPause.Error {
		t.Fatalf("recovery pause meta: hint %q, last error %+v", r.Meta.ResumeHint, r.Meta.LastError)
	}
	if r.LeaseToken != l.Token || !r.LeaseExpiresAt.IsZero() {
		t.Fatalf("paused run lease token %q expires %v, want the worker's token and no expiry", r.LeaseToken, r.LeaseExpiresAt)
	}

	g, _ := e.runIn(t, fxLoop, nil)
	ev := e.last(t, g.ID)
	var p db.Pause
	if err := json.Unmarshal(ev.Data, &p); err != nil || p != gatePause(db.PauseLoop) {
		t.Fatalf("gate_requested data %s (%v), want the pause %+v", ev.Data, err, gatePause(db.PauseLoop))
	}
}

func testFinishKeepsToken(t *testing.T, e *env) {
	e.clock.Advance(time.Minute)
	c, l := e.runIn(t, fxCompleted, nil)
	if c.Meta.Output != "done" || c.LeaseToken != l.Token || !c.LeaseExpiresAt.IsZero() || !c.FinishedAt.Equal(e.clock.Now()) {
		t.Fatalf("completed run: output %q token kept %v expires %v finished %v",
			c.Meta.Output, c.LeaseToken == l.Token, c.LeaseExpiresAt, c.FinishedAt)
	}
	f, l := e.runIn(t, fxFailed, nil)
	want := db.RunError{Node: "test", Class: db.ClassPermanent, Message: "exit 1"}
	if f.Meta.LastError == nil || *f.Meta.LastError != want || f.LeaseToken != l.Token || !f.LeaseExpiresAt.IsZero() {
		t.Fatalf("failed run: last error %+v token kept %v expires %v", f.Meta.LastError, f.LeaseToken == l.Token, f.LeaseExpiresAt)
	}
}

func testRelease(t *testing.T, e *env) {
	r := e.create(t, nil)
	e.claim(t, r.ID)
	e.expireAndRescue(t, 1)
	l := e.claim(t, r.ID).Lease()
	got, err := e.s.ReleaseRun(e.ctx, l)
	if err != nil {
		t.Fatalf("ReleaseRun: %v", err)
	}
	if got.Status != db.StatusQueued || got.LeaseOwner != "" || got.LeaseToken != "" || !got.LeaseExpiresAt.IsZero() {
		t.Fatalf("released run: %s owner %q token %q expires %v, want queued without lease", got.Status, got.LeaseOwner, got.LeaseToken, got.LeaseExpiresAt)
	}
	if got.Recoveries != 1 {
		t.Fatalf("release changed recoveries to %d, want 1", got.Recoveries)
	}
	e.claim(t, r.ID)
}

func testResumeFailed(t *testing.T, e *env) {
	r, _ := e.runIn(t, fxFailed, nil)
	for attempt := 1; attempt <= 2; attempt++ {
		e.clock.Advance(time.Hour)
		got, err := e.s.ResumeRun(e.ctx, r.ID, db.Actor{ID: "slack:U2"})
		if err != nil {
			t.Fatalf("resume %d of a failed run: %v", attempt, err)
		}
		if got.Status != db.StatusQueued || got.Attempt != attempt || got.Meta.ResumedFrom != db.StatusFailed || !got.QueuedAt.Equal(e.clock.Now()) {
			t.Fatalf("resumed run: %s attempt %d from %q queued %v", got.Status, got.Attempt, got.Meta.ResumedFrom, got.QueuedAt)
		}
		ev := e.last(t, r.ID)
		if ev.Type != db.EventResumeRequested || dataField(t, ev, "by") != "slack:U2" || dataField(t, ev, "from") != "failed" {
			t.Fatalf("resume appended %s %s", ev.Type, ev.Data)
		}
		l := e.claim(t, r.ID).Lease()
		must(t)(e.s.FailRun(e.ctx, l, db.RunError{Message: "again"}))
	}

	p, _ := e.runIn(t, fxRecovery, nil)
	got, err := e.s.ResumeRun(e.ctx, p.ID, db.Actor{ID: "slack:U2"})
	if err != nil || got.Meta.Pause != nil || got.Meta.ResumedFrom != db.StatusPaused || got.Attempt != 1 {
		t.Fatalf("resume of a recovery pause: %v, pause %+v from %q attempt %d", err, got.Meta.Pause, got.Meta.ResumedFrom, got.Attempt)
	}
}

func testResumeGateRefused(t *testing.T, e *env) {
	for _, f := range []fixture{fxApproval, fxLoop} {
		r, _ := e.runIn(t, f, nil)
		_, err := e.s.ResumeRun(e.ctx, r.ID, db.Actor{ID: "slack:U2"})
		wantTransitionError(t, err, r.ID, db.StatusPaused, false)
		if got := e.get(t, r.ID); got.Meta.Pause == nil || got.Meta.Pause.Kind != f.pauseKind() {
			t.Fatalf("refused resume changed the pause to %+v", got.Meta.Pause)
		}
		e.retire(t, r.ID)
	}
}

func testCancelClearsLease(t *testing.T, e *env) {
	r, l := e.runIn(t, fxRunning, nil)
	e.clock.Advance(time.Second)
	got, err := e.s.CancelRun(e.ctx, r.ID, db.Actor{ID: "slack:U2"}, "wrong branch")
	if err != nil {
		t.Fatalf("CancelRun: %v", err)
	}
	if got.LeaseOwner != "" || got.LeaseToken != "" || !got.LeaseExpiresAt.IsZero() || !got.FinishedAt.Equal(e.clock.Now()) {
		t.Fatalf("cancelled run keeps lease owner %q token %q expires %v; finished %v", got.LeaseOwner, got.LeaseToken, got.LeaseExpiresAt, got.FinishedAt)
	}
	ev := e.last(t, r.ID)
	if ev.Type != db.EventRunCancelled || dataField(t, ev, "by") != "slack:U2" || dataField(t, ev, "reason") != "wrong branch" {
		t.Fatalf("cancel appended %s %s", ev.Type, ev.Data)
	}
	_, err = e.s.RecordEvent(e.ctx, l, db.Event{Type: db.EventNodeStarted, NodeID: "build"})
	wantTransitionError(t, err, r.ID, db.StatusCancelled, true)
	_, err = e.s.CompleteRun(e.ctx, l, "done")
	wantTransitionError(t, err, r.ID, db.StatusCancelled, true)
	if err := e.s.Heartbeat(e.ctx, l, leaseTTL); !errors.Is(err, db.ErrLeaseLost) {
		t.Fatalf("Heartbeat after cancel: %v, want ErrLeaseLost", err)
	}
}

func testTerminalAbsorbing(t *testing.T, e *env) {
	done, _ := e.runIn(t, fxCompleted, nil)
	gone, _ := e.runIn(t, fxCancelled, nil)
	e.clock.Advance(time.Hour)
	if res, err := e.s.RescueExpired(e.ctx, 3); err != nil || len(res) != 0 {
		t.Fatalf("RescueExpired touched terminal runs: %v, %v", res, err)
	}
	if _, err := e.s.ClaimRun(e.ctx, worker, leaseTTL, db.Reach{}); !errors.Is(err, db.ErrNoQueuedRun) {
		t.Fatalf("ClaimRun with only terminal runs: %v, want ErrNoQueuedRun", err)
	}
	for _, r := range []db.Run{done, gone} {
		_, err := e.s.ResumeRun(e.ctx, r.ID, db.Actor{ID: "slack:U2"})
		wantTransitionError(t, err, r.ID, r.Status, false)
		_, err = e.s.CancelRun(e.ctx, r.ID, db.Actor{ID: "slack:U2"}, "again")
		wantTransitionError(t, err, r.ID, r.Status, false)
	}
}

func testUnknownRun(t *testing.T, e *env) {
	const id = "zzzzzzzzzz"
	if _, err := e.s.GetRun(e.ctx, id); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("GetRun of unknown run: %v, want ErrNotFound", err)
	}
	_, err := e.s.ResumeRun(e.ctx, id, db.Actor{ID: "slack:U2"})
	wantTransitionError(t, err, id, "", false)
	if !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("ResumeRun of unknown run: %v does not match ErrNotFound", err)
	}
	_, err = e.s.CancelRun(e.ctx, id, db.Actor{ID: "slack:U2"}, "")
	wantTransitionError(t, err, id, "", false)
	_, err = e.s.CompleteRun(e.ctx, db.Lease{RunID: id, Owner: worker, Token: db.NewToken()}, "")
	wantTransitionError(t, err, id, "", true)
	_, err = e.s.ResolveGate(e.ctx, db.GateResolution{RunID: id, Decision: db.DecisionApprove, By: "slack:U2"})
	wantTransitionError(t, err, id, "", false)
}

// testClaimOnlyReportablePlatforms: a worker that names platforms takes only runs on them, oldest
// first, and leaves the rest for workers that can report them.
func testClaimOnlyReportablePlatforms(t *testing.T, e *env) {
	slackRun := e.create(t, nil)
	e.clock.Advance(time.Second)
	if _, err := e.s.EnsureConversation(e.ctx, db.Conversation{Platform: "console", ChannelID: "local"}); err != nil {
		t.Fatal(err)
	}
	consoleRun := e.create(t, func(n *db.NewRun) { n.ConversationID, n.ParentConversationID = "console:local", "console:local" })
	got, err := e.s.ClaimRun(e.ctx, worker, leaseTTL, db.Reach{Platforms: []string{"console"}})
	if err != nil || got.ID != consoleRun.ID {
		t.Fatalf("ClaimRun(console) = %s, %v; want the console run %s, not the older slack run", got.ID, err, consoleRun.ID)
	}
	if _, err := e.s.ClaimRun(e.ctx, worker, leaseTTL, db.Reach{Platforms: []string{"console", "discord"}}); !errors.Is(err, db.ErrNoQueuedRun) {
		t.Fatalf("ClaimRun(console, discord) with only a slack run queued: %v, want ErrNoQueuedRun", err)
	}
	if got, err := e.s.ClaimRun(e.ctx, worker, leaseTTL, db.Reach{Platforms: []string{"discord", "slack"}}); err != nil || got.ID != slackRun.ID {
		t.Fatalf("ClaimRun(discord, slack) = %s, %v; want the slack run", got.ID, err)
	}
}
