package execution

import (
	"context"
	"sync"
)

// slot is the worker slot an execution holds (Workers.Slots). While every node of a run that is
// still going waits for a child run (a `workflow:` node), the run lends its slot back, so the
// child, or any other run, can be claimed: with every slot held by a parent waiting for a child
// that no slot is left for, nothing would run again. The run keeps its lease (renewed as any
// local execution's) and takes a slot again before its node goes on; that wait ends because the
// runs holding slots are doing work, not waiting.
type slot struct {
	sem     chan struct{} // Workers.Run's slots; nil outside a worker (tests)
	mu      sync.Mutex
	held    bool // the run holds one of sem's slots
	waiting int  // the run's nodes lending it (waiting for a child)
}

type slotKey struct{}

func withSlot(ctx context.Context, s *slot) context.Context {
	return context.WithValue(ctx, slotKey{}, s)
}

// done gives the slot back as the execution ends, unless it is lent.
func (s *slot) done() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.held {
		s.held = false
		<-s.sem
	}
}

// loan is one node's lending of its run's slot: lend frees it (once), restore takes a slot again
// when no other node of the run still waits.
type loan struct {
	s    *slot
	lent bool
}

// lender is the loan of the slot the execution of ctx holds (a no-op outside a worker).
func lender(ctx context.Context) *loan {
	s, _ := ctx.Value(slotKey{}).(*slot)
	return &loan{s: s}
}

// lend frees the run's slot while this node waits; calling it again does nothing.
func (l *loan) lend() {
	if l.s == nil || l.lent {
		return
	}
	l.lent = true
	s := l.s
	s.mu.Lock()
	defer s.mu.Unlock()
	s.waiting++
	if s.held {
		s.held = false
		<-s.sem
	}
}

// restore takes a slot again for the node to go on, unless another node of the run still waits
// (the run needs no slot yet) or ctx ended (the execution stops and needs none).
func (l *loan) restore(ctx context.Context) {
	if l.s == nil || !l.lent {
		return
	}
	l.lent = false
	s := l.s
	s.mu.Lock()
	s.waiting--
	if s.waiting > 0 || s.held {
		s.mu.Unlock()
		return
	}
	s.mu.Unlock()
	select {
	case s.sem <- struct{}{}:
	case <-ctx.Done():
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.waiting > 0 || s.held { // a node began waiting again meanwhile, or another took one
		<-s.sem
		return
	}
	s.held = true
}
