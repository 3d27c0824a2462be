package conversation

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"threadflow/db"
	"threadflow/db/dbtest"
)

// gatedMarker is the real store, counting its batch writes and holding the first one until
// released, so a test can line up a burst behind it.
type gatedMarker struct {
	db.Store
	calls   atomic.Int32
	entered chan struct{}
	release chan struct{}
}

func (g *gatedMarker) KeepInbound(ctx context.Context, events []db.KeptEvent) ([]bool, error) {
	if g.calls.Add(1) == 1 {
		close(g.entered)
		<-g.release
	}
	return g.Store.KeepInbound(ctx, events)
}

func (d *BatchKeeper) queued() int { return d.keep.Pending() }

// A burst that arrives while a write is in flight is recorded in one more write, and every
// redelivered event in it is reported as a duplicate exactly once per id.
func TestBatchKeeperRecordsABurstTogether(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, open func(t testing.TB, opts db.Options) db.Store) {
		g := &gatedMarker{Store: open(t, db.Options{}), entered: make(chan struct{}), release: make(chan struct{})}
		d := NewBatchKeeper(g)
		ctx := context.Background()
		firstDone := make(chan bool)
		go func() {
			ok, err := d.MarkInbound(ctx, "slack", "lead")
			if err != nil {
				t.Error(err)
			}
			firstDone <- ok
		}()
		<-g.entered
		const burst = 40 // 20 events, each delivered twice
		var news atomic.Int32
		var wg sync.WaitGroup
		for i := range burst {
			wg.Add(1)
			go func() {
				defer wg.Done()
				ok, err := d.MarkInbound(ctx, "slack", fmt.Sprintf("ev-%d", i%(burst/2)))
				if err != nil {
					t.Error(err)
				}
				if ok {
					news.Add(1)
				}
			}()
		}
		for d.queued() < burst {
			runtime.Gosched()
		}
		close(g.release)
		wg.Wait()
		if !<-firstDone {
			t.Fatal("the first event was reported as a duplicate")
		}
		if n := news.Load(); n != burst/2 {
			t.Fatalf("%d events reported new, want %d (each id once)", n, burst/2)
		}
		if n := g.calls.Load(); n != 2 {
			t.Fatalf("%d writes for a burst queued behind one, want 2", n)
		}
		if ok, err := g.Store.MarkInbound(ctx, "slack", "ev-7"); err != nil || ok {
			t.Fatalf("ev-7 after the burst: new=%v, %v; want it recorded", ok, err)
		}
	})
}

// A caller whose context ends while its write is in flight still gets the write's answer: an
// event recorded as new must be handled, or its redelivery would be dropped as a duplicate of a
// message nobody acted on.
func TestBatchKeeperAnswersACallerWhoseContextEnded(t *testing.T) {
	t.Parallel()
	st := dbtest.SQLite(t, db.Options{})
	g := &gatedMarker{Store: st, entered: make(chan struct{}), release: make(chan struct{})}
	d := NewBatchKeeper(g)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	var first bool
	go func() {
		var err error
		first, err = d.MarkInbound(ctx, "slack", "late")
		done <- err
	}()
	<-g.entered
	cancel()
	close(g.release)
	if err := <-done; err != nil || !first {
		t.Fatalf("MarkInbound = %v, %v; want the write's answer (new) despite the cancelled context", first, err)
	}
	if _, err := d.MarkInbound(ctx, "slack", "other"); err == nil {
		t.Fatal("MarkInbound with an ended context queued an event; want the context's error before anything is written")
	}
}
