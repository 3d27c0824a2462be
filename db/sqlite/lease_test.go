package sqlite

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"threadflow/db"
)

// A lease renewal goes ahead of the writes queued before it: every one of them, once it runs,
// already finds the lease extended. Behind a replica's own burst of writes a renewal came too late
// and the replica's rescuer took its own runs for crashed (BENCHMARKS.md, recovery).
func TestLeaseRenewalGoesAheadOfQueuedWrites(t *testing.T) {
	ctx := t.Context()
	s, err := Open(ctx, filepath.Join(t.TempDir(), "t.db"), db.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	if _, err := s.EnsureConversation(ctx, db.Conversation{Platform: "slack", ChannelID: "C1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateRun(ctx, db.NewRun{Workflow: "build", ConversationID: "slack:C1"}); err != nil {
		t.Fatal(err)
	}
	runs, err := s.ClaimRuns(ctx, "replica-a", time.Second, db.Reach{}, 1)
	if err != nil {
		t.Fatal(err)
	}
	run := runs[0]

	held, hold := make(chan struct{}), make(chan struct{})
	go func() { _ = s.write(ctx, func(*wtx) error { close(held); <-hold; return nil }) }()
	<-held
	var (
		mu   sync.Mutex
		seen []int64 // lease_expires_at each queued writer found
		wg   sync.WaitGroup
	)
	enqueue := func(f func()) {
		before := s.turn.waiters()
		wg.Add(1)
		go func() { defer wg.Done(); f() }()
		for s.turn.waiters() == before {
			yieldCPU()
		}
	}
	for range 3 {
		enqueue(func() {
			err := s.write(ctx, func(tx *wtx) error {
				var exp int64
				err := tx.QueryRowContext(ctx, `SELECT lease_expires_at FROM runs WHERE id = ?`, run.ID).Scan(&exp)
				mu.Lock()
				seen = append(seen, exp)
				mu.Unlock()
				return err
			})
			if err != nil {
				t.Errorf("queued write: %v", err)
			}
		})
	}
	enqueue(func() {
		if lost, err := s.RenewLeases(context.Background(), []db.Lease{run.Lease()}, time.Hour); err != nil || len(lost) > 0 {
			t.Errorf("RenewLeases = lost %v, %v; want the lease renewed", lost, err)
		}
	})
	close(hold)
	wg.Wait()
	for i, exp := range seen {
		if !fromMicros(exp).After(run.LeaseExpiresAt.Add(time.Minute)) {
			t.Errorf("writer %d queued before the renewal ran before it: found the lease expiring at %v, not an hour on", i, fromMicros(exp))
		}
	}
}
