package storetest

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"threadflow/db"
)

// racers is how many goroutines each race starts: enough to collide on every engine.
const racers = 32

func concurrencyTests() []test {
	return []test{
		{"ResumeRace", testResumeRace},
		{"ClaimRace", testClaimRace},
		{"BatchClaimRace", testBatchClaimRace},
		{"CancelVersusComplete", testCancelVersusComplete},
	}
}

// race runs fn from racers goroutines at once and returns their errors by index.
func race(fn func(i int) error) []error {
	errs := make([]error, racers)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range racers {
		wg.Go(func() {
			<-start
			errs[i] = fn(i)
		})
	}
	close(start)
	wg.Wait()
	return errs
}

// testResumeRace is two people (or 32) typing /workflow resume at once: exactly one resume wins,
// every other one learns the run already left failed, and nothing is lost to a busy database.
func testResumeRace(t *testing.T, e *env) {
	r, _ := e.runIn(t, fxFailed, nil)
	errs := race(func(int) error {
		_, err := e.s.ResumeRun(e.ctx, r.ID, db.Actor{ID: "slack:U2"})
		return err
	})
	wins := 0
	for _, err := range errs {
		if err == nil {
			wins++
			continue
		}
		var te *db.TransitionError
		if !errors.As(err, &te) || (te.Found != db.StatusQueued && te.Found != db.StatusRunning) {
			t.Fatalf("losing resume got %v, want a TransitionError finding queued", err)
		}
	}
	if wins != 1 {
		t.Fatalf("%d resumes won, want exactly 1", wins)
	}
	if n := e.countEvents(t, r.ID, db.EventResumeRequested); n != 1 {
		t.Fatalf("%d run_resume_requested events, want 1", n)
	}
	if got := e.get(t, r.ID); got.Attempt != 1 {
		t.Fatalf("attempt %d after one winning resume, want 1", got.Attempt)
	}
}

// testClaimRace: workers polling together claim every queued run exactly once.
func testClaimRace(t *testing.T, e *env) {
	const runs = racers / 2
	want := map[string]bool{}
	for range runs {
		want[e.create(t, nil).ID] = true
	}
	claimed := make([]string, racers)
	errs := race(func(i int) error {
		r, err := e.s.ClaimRun(e.ctx, worker, leaseTTL, db.Reach{})
		claimed[i] = r.ID
		return err
	})
	got := map[string]bool{}
	for i, err := range errs {
		switch {
		case errors.Is(err, db.ErrNoQueuedRun):
		case err != nil:
			t.Fatalf("claimer %d: %v", i, err)
		case got[claimed[i]]:
			t.Fatalf("run %s claimed twice", claimed[i])
		case !want[claimed[i]]:
			t.Fatalf("claimed unknown run %q", claimed[i])
		default:
			got[claimed[i]] = true
		}
	}
	if len(got) != runs {
		t.Fatalf("claimed %d runs, want all %d", len(got), runs)
	}
	for id := range want {
		if n := e.countEvents(t, id, db.EventRunClaimed); n != 1 {
			t.Fatalf("run %s has %d run_claimed events", id, n)
		}
	}
}

// testBatchClaimRace: replicas claiming batches at once (ClaimRuns, as a restarted replica with
// free slots does) take every queued run exactly once, each under its own lease token.
func testBatchClaimRace(t *testing.T, e *env) {
	const runs = racers * 2
	want := map[string]bool{}
	for range runs {
		want[e.create(t, nil).ID] = true
	}
	claimed := make([][]db.Run, racers)
	errs := race(func(i int) error {
		var err error
		claimed[i], err = e.s.ClaimRuns(e.ctx, worker, leaseTTL, db.Reach{}, 1+i%5)
		return err
	})
	got, tokens := map[string]bool{}, map[string]bool{}
	for i, err := range errs {
		if err != nil && !errors.Is(err, db.ErrNoQueuedRun) {
			t.Fatalf("claimer %d: %v", i, err)
		}
		if len(claimed[i]) > 1+i%5 {
			t.Fatalf("claimer %d asked for %d runs and took %d", i, 1+i%5, len(claimed[i]))
		}
		for _, r := range claimed[i] {
			switch {
			case got[r.ID]:
				t.Fatalf("run %s claimed twice", r.ID)
			case !want[r.ID]:
				t.Fatalf("claimed unknown run %q", r.ID)
			case r.Status != db.StatusRunning || r.LeaseToken == "" || tokens[r.LeaseToken]:
				t.Fatalf("run %s claimed as %s with token %q (empty or given twice)", r.ID, r.Status, r.LeaseToken)
			}
			got[r.ID], tokens[r.LeaseToken] = true, true
		}
	}
	// 32 claimers asking for 1-5 runs each ask for 96 in all: every one of the 64 queued is taken.
	if len(got) != runs {
		t.Fatalf("claimed %d runs, want all %d", len(got), runs)
	}
	for id := range want {
		if n := e.countEvents(t, id, db.EventRunClaimed); n != 1 {
			t.Fatalf("run %s has %d run_claimed events", id, n)
		}
	}
	if _, err := e.s.ClaimRuns(e.ctx, worker, leaseTTL, db.Reach{}, db.MaxClaimBatch+1); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("1-%d runs", db.MaxClaimBatch)) {
		t.Fatalf("a claim of %d runs gave %v, want an error naming the 1-%d bound", db.MaxClaimBatch+1, err, db.MaxClaimBatch)
	}
}

// testCancelVersusComplete: a user abandons a run while its worker finishes it. One wins, and the
// stored status and events agree with the winner.
func testCancelVersusComplete(t *testing.T, e *env) {
	r, l := e.runIn(t, fxRunning, nil)
	errs := race(func(i int) error {
		var err error
		if i%2 == 0 {
			_, err = e.s.CancelRun(e.ctx, r.ID, db.Actor{ID: "slack:U2"}, "stop")
		} else {
			_, err = e.s.CompleteRun(e.ctx, l, "done")
		}
		return err
	})
	final := e.get(t, r.ID).Status
	cancels, completes := 0, 0
	for i, err := range errs {
		switch {
		case err == nil && i%2 == 0:
			cancels++
		case err == nil:
			completes++
		case !errors.Is(err, db.ErrInvalidTransition):
			t.Fatalf("racer %d: %v, want success or a TransitionError", i, err)
		}
	}
	// Cancel has one winner; completion with the same lease is replayed, so every completer
	// succeeds when completion won.
	ok := (final == db.StatusCancelled && cancels == 1 && completes == 0) ||
		(final == db.StatusCompleted && cancels == 0 && completes == racers/2)
	if !ok {
		t.Fatalf("final status %s with %d cancels and %d completions succeeding", final, cancels, completes)
	}
	cancelled := e.countEvents(t, r.ID, db.EventRunCancelled)
	completed := e.countEvents(t, r.ID, db.EventRunCompleted)
	if cancelled+completed != 1 {
		t.Fatalf("%d run_cancelled and %d run_completed events, want exactly one in total", cancelled, completed)
	}
}
