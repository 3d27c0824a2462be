package orchestrator_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"threadflow/adapters/console"
	"threadflow/conversation"
	"threadflow/db"
	"threadflow/db/dbtest"
	"threadflow/db/storetest"
	"threadflow/orchestrator/maintenance"
	"threadflow/orchestrator/reporting"
)

// shutdownAfterRescue is the real store, with the engine's shutdown arriving right after the
// rescuer's store write: the moment `bot chat` exits once its runs have stopped.
type shutdownAfterRescue struct {
	db.Store
	shutdown context.CancelFunc
}

func (s shutdownAfterRescue) RescueExpired(ctx context.Context, maxRecoveries int) ([]db.Rescue, error) {
	defer s.shutdown()
	return s.Store.RescueExpired(ctx, maxRecoveries)
}

// A run the rescuer fails for good is already failed in the store when its notice goes out. The
// notice must still reach the thread when the engine shuts down at that moment; CI caught `bot
// chat` exiting in between, and the thread never learned why the run stopped or how to resume it.
func TestRescuerFailureNoticeSurvivesShutdown(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, open func(t testing.TB, opts db.Options) db.Store) {
		clock := storetest.NewClock(time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC))
		st := open(t, db.Options{Now: clock.Now})
		ctx, shutdown := context.WithCancel(context.Background())
		defer shutdown()
		run := claimedByADeadWorker(ctx, t, st, "crasher")
		clock.Advance(2 * time.Second) // the worker died: its lease runs out
		var out bytes.Buffer
		reporter := &reporting.Reporter{Store: st, Log: zap.NewNop(),
			Outboxes: map[string]conversation.Outbox{console.Platform: console.NewOutbox(&out)}}
		r := &maintenance.Rescuer{Store: shutdownAfterRescue{st, shutdown}, Notify: reporter, Log: zap.NewNop(), MaxRecoveries: 0}
		r.Once(ctx)
		if got, _ := st.GetRun(context.Background(), run.ID); got.Status != db.StatusFailed {
			t.Fatalf("run is %s after the rescue, want failed", got.Status)
		}
		// The notice is owed in the store, so the next process's courier delivers it.
		next := &maintenance.Courier{Store: st, Log: zap.NewNop(), Owner: "next", Outboxes: reporter.Outboxes}
		if n := next.Once(context.Background()); n == 0 {
			t.Fatal("the courier delivered nothing")
		}
		for _, want := range []string{run.ID, "without completing a node", "/workflow resume " + run.ID, "/workflow abandon " + run.ID} {
			if !strings.Contains(out.String(), want) {
				t.Fatalf("the conversation lacks %q; it shows:\n%s", want, out.String())
			}
		}
	})
}

// A replica that died is taken over as soon as its leases expire, not at the rescuer's next
// periodic look: with an hour between looks, the dead worker's run is rescued once its one-second
// lease has passed.
func TestRescuerLooksWhenALeaseExpires(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, open func(t testing.TB, opts db.Options) db.Store) {
		st := open(t, db.Options{})
		ctx, cancel := context.WithCancel(context.Background())
		run := claimedByADeadWorker(ctx, t, st, "deploy")
		rescued := make(chan struct{}, 1)
		r := &maintenance.Rescuer{Store: st, Log: zap.NewNop(), Interval: time.Hour, MaxRecoveries: 3,
			Wake: func() { rescued <- struct{}{} }}
		done := make(chan struct{})
		go func() { defer close(done); r.Run(ctx) }()
		defer func() { cancel(); <-done }()
		select {
		case <-rescued:
		case <-time.After(30 * time.Second):
			t.Fatal("the dead worker's run was not rescued within 30s; the rescuer waits for its hourly look")
		}
		if got, err := st.GetRun(ctx, run.ID); err != nil || got.Status != db.StatusQueued || got.Recoveries != 1 {
			t.Fatalf("run after the rescue: %s, %d recoveries (%v); want queued again, 1 recovery", got.Status, got.Recoveries, err)
		}
	})
}

// claimedByADeadWorker creates a run of workflow in a console conversation and claims it for a
// worker that will never renew its one-second lease.
func claimedByADeadWorker(ctx context.Context, t *testing.T, st db.Store, workflow string) db.Run {
	t.Helper()
	conv := db.ConversationKey(console.Platform, workflow, "")
	if _, err := st.EnsureConversation(ctx, db.Conversation{ID: conv, Platform: console.Platform, ChannelID: workflow}); err != nil {
		t.Fatal(err)
	}
	run, err := st.CreateRun(ctx, db.NewRun{Workflow: workflow, ConversationID: conv, ParentConversationID: conv, UserID: "console:local"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.ClaimRun(ctx, "dead-worker", time.Second, db.Reach{}); err != nil {
		t.Fatal(err)
	}
	return run
}
