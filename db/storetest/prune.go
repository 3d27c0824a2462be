package storetest

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"threadflow/db"
)

func pruneTests() []test {
	return []test{
		{"RunsPastRetentionGoWithWhatTheyOwn", testPruneRunsPastRetention},
		{"DryRunChangesNothing", testPruneDryRun},
		{"PrunersAtOnceDeleteEachRowOnce", testPrunersAtOnce},
		{"OffKeepsEverything", testPruneOff},
		{"ChildRunsGoWithTheirParent", testPruneChildren},
		{"HandledInboundEventsGo", testPruneInbound},
	}
}

// day is retention's unit in these tests.
const day = 24 * time.Hour

// retention is the tests' retention: 90 days for finished runs, 365 for failed and paused ones.
var retention = db.Retention{Finished: 90 * day, Unfinished: 365 * day}

// ownedRun builds a run in state f with something of everything a run owns: node events, a
// transcript message and a node session.
func (e *env) ownedRun(t *testing.T, f fixture) db.Run {
	t.Helper()
	r, _ := e.runIn(t, f, nil)
	if _, err := e.s.AppendMessage(e.ctx, db.TranscriptMessage{ConversationID: threadConv, Platform: "slack", ChannelID: "C1",
		ThreadID: "T1", MessageID: "m-" + r.ID, RunID: r.ID, Text: "run " + r.ID}); err != nil {
		t.Fatalf("AppendMessage: %v", err)
	}
	if err := e.s.SetSession(e.ctx, db.Session{RunID: r.ID, NodeID: "plan", Provider: "claude", SessionID: "s-" + r.ID}); err != nil {
		t.Fatalf("SetSession: %v", err)
	}
	return r
}

// gone checks that run id and everything it owned are deleted.
func (e *env) gone(t *testing.T, id string) {
	t.Helper()
	if _, err := e.s.GetRun(e.ctx, id); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("GetRun(%s) after prune: err = %v, want ErrNotFound", id, err)
	}
	if evs, err := e.s.Events(e.ctx, id); err != nil || len(evs) != 0 {
		t.Errorf("Events(%s) after prune = %d events, %v; want none", id, len(evs), err)
	}
	if _, err := e.s.FindMessage(e.ctx, "slack", "C1", "m-"+id); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("transcript message of run %s after prune: err = %v, want ErrNotFound", id, err)
	}
	if _, err := e.s.GetSession(e.ctx, "", id, "plan"); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("session of run %s after prune: err = %v, want ErrNotFound", id, err)
	}
}

// kept checks that run id is still there with its events.
func (e *env) kept(t *testing.T, id, why string) {
	t.Helper()
	if _, err := e.s.GetRun(e.ctx, id); err != nil {
		t.Errorf("run %s (%s) after prune: %v, want it kept", id, why, err)
	}
	if len(e.events(t, id)) == 0 {
		t.Errorf("run %s (%s) lost its events", id, why)
	}
}

func (e *env) prune(t *testing.T, r db.Retention, dry bool) (db.PruneReport, []string) {
	t.Helper()
	var gone []string
	got, err := e.s.Prune(e.ctx, db.PruneRequest{Retention: r, DryRun: dry, Gone: func(ids []string) { gone = append(gone, ids...) }})
	if err != nil {
		t.Fatalf("Prune: %v", err)
	}
	return got, gone
}

// testPruneRunsPastRetention: finished runs go 90 days after they finished, failed and paused ones
// 365 days after they last changed, each with its events, transcript messages and sessions; newer
// runs, queued and running ones, and a run still owing its thread a message stay.
func testPruneRunsPastRetention(t *testing.T, e *env) {
	old := map[fixture]db.Run{}
	for _, f := range []fixture{fxCompleted, fxCancelled, fxFailed, fxApproval, fxRecovery} {
		old[f] = e.ownedRun(t, f)
	}
	owing := e.ownedRun(t, fxCompleted)
	if err := e.s.Owe(e.ctx, owing.ID, db.Owed{Kind: "completed", Key: "done", Target: db.TargetThread, Reply: []byte(`{}`)}); err != nil {
		t.Fatalf("Owe: %v", err)
	}
	e.clock.Advance(100 * day)
	recent := e.ownedRun(t, fxCompleted)
	queued, _ := e.runIn(t, fxQueued, nil) // never pruned, however old; made last, as fixtures claim the oldest

	got, gone := e.prune(t, retention, false)
	if got.Runs != 2 || len(gone) != 2 || got.Events == 0 || got.Bytes == 0 {
		t.Fatalf("prune at 100 days = %+v, told %v; want the 2 old finished runs with their events and bytes", got, gone)
	}
	for _, f := range []fixture{fxCompleted, fxCancelled} {
		e.gone(t, old[f].ID)
	}
	for id, why := range map[string]string{old[fxFailed].ID: "failed 100 days ago", old[fxApproval].ID: "paused 100 days ago",
		recent.ID: "finished now", owing.ID: "owes a message", queued.ID: "queued"} {
		e.kept(t, id, why)
	}

	e.clock.Advance(300 * day)
	if got, _ := e.prune(t, retention, false); got.Runs != 4 {
		t.Errorf("prune at 400 days deleted %d runs, want 4: the failed and paused runs, and the one finished 300 days ago", got.Runs)
	}
	for _, r := range []db.Run{old[fxFailed], old[fxApproval], old[fxRecovery], recent} {
		e.gone(t, r.ID)
	}
	e.kept(t, owing.ID, "owes a message")
	e.kept(t, queued.ID, "queued")
}

// testPruneDryRun: a dry run says what the prune deletes, to the byte, and deletes nothing.
func testPruneDryRun(t *testing.T, e *env) {
	var ids []string
	for _, f := range []fixture{fxCompleted, fxCancelled, fxFailed} {
		ids = append(ids, e.ownedRun(t, f).ID)
	}
	e.clock.Advance(400 * day)
	dry, told := e.prune(t, retention, true)
	if dry.Runs != 3 || dry.Events == 0 || dry.Bytes == 0 || len(told) != 0 {
		t.Fatalf("dry run = %+v, told %v; want 3 runs with their events and bytes, nothing told gone", dry, told)
	}
	for _, id := range ids {
		e.kept(t, id, "after a dry run")
	}
	if again, _ := e.prune(t, retention, true); again != dry {
		t.Errorf("second dry run = %+v, want %+v: the first changed something", again, dry)
	}
	if real, _ := e.prune(t, retention, false); real != dry {
		t.Errorf("prune = %+v, want what the dry run said, %+v", real, dry)
	}
}

// testPrunersAtOnce: 32 pruners at once (replicas, or `bot prune` beside a server) delete each run
// once: together they report every run once, and every one is gone.
func testPrunersAtOnce(t *testing.T, e *env) {
	const runs = 3*db.MaxPruneBatch + 7
	ids := make([]db.Run, runs)
	for i := range ids {
		ids[i], _ = e.runIn(t, fxCompleted, nil)
	}
	e.clock.Advance(91 * day)
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		total db.PruneReport
		told  = map[string]int{}
	)
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got, err := e.s.Prune(e.ctx, db.PruneRequest{Retention: retention, Gone: func(gone []string) {
				mu.Lock()
				defer mu.Unlock()
				for _, id := range gone {
					told[id]++
				}
			}})
			if err != nil {
				t.Errorf("Prune: %v", err)
			}
			mu.Lock()
			defer mu.Unlock()
			total.Runs += got.Runs
		}()
	}
	wg.Wait()
	if total.Runs != runs || len(told) != runs {
		t.Errorf("32 pruners deleted %d runs and told %d apart, want %d each", total.Runs, len(told), runs)
	}
	for id, n := range told {
		if n != 1 {
			t.Errorf("run %s told gone %d times, want once", id, n)
		}
	}
	for _, r := range ids {
		if _, err := e.s.GetRun(e.ctx, r.ID); !errors.Is(err, db.ErrNotFound) {
			t.Errorf("run %s after the pruners: %v, want ErrNotFound", r.ID, err)
		}
	}
}

// testPruneOff: with retention off (zero) nothing goes, however old.
func testPruneOff(t *testing.T, e *env) {
	r, _ := e.runIn(t, fxCompleted, nil)
	e.clock.Advance(10_000 * day)
	if got, _ := e.prune(t, db.Retention{}, false); got.Runs != 0 {
		t.Errorf("prune with retention off deleted %d runs", got.Runs)
	}
	e.kept(t, r.ID, "retention off")
}

// testPruneChildren: a run past retention goes with its child runs at any depth (their rows went
// by the foreign key's cascade before, and their files stayed): each is told gone, so its files
// go too, and its events are counted; a dry run says the same.
func testPruneChildren(t *testing.T, e *env) {
	parent, _ := e.runIn(t, fxCompleted, nil)
	e.ownedRun(t, fxCompleted) // a run without children, beside them
	c1, _ := e.runIn(t, fxCompleted, child(parent.ID, "sub", -1))
	c2, _ := e.runIn(t, fxCompleted, child(c1.ID, "sub", -1))
	e.clock.Advance(91 * day)
	dry, _ := e.prune(t, retention, true)
	got, gone := e.prune(t, retention, false)
	if got.Runs != 4 || len(gone) != 4 {
		t.Fatalf("prune = %+v, told %v; want the parent, its child, its grandchild and the other run", got, gone)
	}
	for _, id := range []string{parent.ID, c1.ID, c2.ID} {
		if !slices.Contains(gone, id) {
			t.Errorf("prune told %v gone, want %s among them (its files go by that)", gone, id)
		}
		e.gone(t, id)
	}
	if dry != got {
		t.Errorf("dry run = %+v, prune = %+v; want the same", dry, got)
	}
}

// testPruneInbound: handled inbound events (de-duplication records) received before RETENTION
// go; newer ones and those still keeping a message stay, so a redelivery is still refused.
func testPruneInbound(t *testing.T, e *env) {
	if first, err := e.s.MarkInbound(e.ctx, "slack", "old-handled"); err != nil || !first {
		t.Fatalf("MarkInbound = %v, %v", first, err)
	}
	e.keep(t, kept("slack", "old-kept", "still being handled"))
	e.clock.Advance(91 * day)
	if first, err := e.s.MarkInbound(e.ctx, "slack", "new-handled"); err != nil || !first {
		t.Fatalf("MarkInbound = %v, %v", first, err)
	}
	dry, _ := e.prune(t, retention, true)
	got, _ := e.prune(t, retention, false)
	if got.Inbound != 1 || dry.Inbound != 1 {
		t.Fatalf("prune deleted %d inbound events (dry run: %d), want 1: the handled one received 91 days ago", got.Inbound, dry.Inbound)
	}
	if first, err := e.s.MarkInbound(e.ctx, "slack", "old-handled"); err != nil || !first {
		t.Errorf("the pruned event's redelivery: first = %v, %v; want it new (its record is gone)", first, err)
	}
	for _, id := range []string{"new-handled", "old-kept"} {
		if first, err := e.s.MarkInbound(e.ctx, "slack", id); err != nil || first {
			t.Errorf("event %s after prune: first = %v, %v; want it still recorded", id, first, err)
		}
	}
}
