package execution

import (
	"context"
	"testing"
)

// TestSlotIsLentOnceWhileAnyNodeWaits: two nodes of one run waiting for children lend its one
// slot once; it is taken again only when the last stops waiting, and an execution that stopped
// meanwhile takes none and gives none back.
func TestSlotIsLentOnceWhileAnyNodeWaits(t *testing.T) {
	sem := make(chan struct{}, 1)
	sem <- struct{}{} // the run's slot, as Workers.Run takes it before the claim
	s := &slot{sem: sem, held: true}
	ctx := withSlot(context.Background(), s)
	a, b := lender(ctx), lender(ctx)
	a.lend()
	b.lend()
	a.lend() // again: nothing more
	if len(sem) != 0 || s.held {
		t.Fatalf("while two nodes wait: %d slots taken, held %v; want the run's slot free", len(sem), s.held)
	}
	sem <- struct{}{} // another run (the child) takes it
	<-sem             // and ends
	a.restore(ctx)
	if len(sem) != 0 || s.held {
		t.Fatalf("one node still waits: %d slots taken, held %v; want none", len(sem), s.held)
	}
	b.restore(ctx)
	if len(sem) != 1 || !s.held {
		t.Fatalf("no node waits: %d slots taken, held %v; want the run's slot again", len(sem), s.held)
	}
	s.done()
	if len(sem) != 0 {
		t.Fatalf("after the execution ended %d slots are taken", len(sem))
	}

	// A node that stops waiting after its execution was stopped, every slot taken by others,
	// returns without one, and the execution's end gives none back.
	sem <- struct{}{}
	s = &slot{sem: sem, held: true}
	ctx, cancel := context.WithCancel(withSlot(context.Background(), s))
	l := lender(ctx)
	l.lend()
	sem <- struct{}{} // taken by another run
	cancel()
	l.restore(ctx)
	s.done()
	if len(sem) != 1 || s.held {
		t.Fatalf("stopped execution: %d slots taken (want the other run's 1), held %v", len(sem), s.held)
	}
	// Outside a worker there is no slot: lending does nothing.
	l = lender(context.Background())
	l.lend()
	l.restore(context.Background())
}
