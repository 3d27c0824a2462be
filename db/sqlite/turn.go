package sqlite

import (
	"context"
	"sync"
)

// turn orders the writers of the single write connection: first come, first served, except that
// urgent writers (an inbound message's de-duplication record, which every first reply waits for;
// what a person typed in the web chat, which their request waits for;
// lease renewals, which must land before the leases expire; claims and rescues) go before every
// normal one queued. database/sql alone hands a freed connection to a random waiter, so under a
// burst the record a user's reply waits for could sit behind any number of later writes.
// Hand-rolled because neither database/sql nor x/sync/semaphore has priorities.
type turn struct {
	mu     sync.Mutex
	busy   bool
	urgent []chan struct{}
	normal []chan struct{}
}

// acquire waits for the turn; on error (ctx ended) the caller does not hold it.
func (t *turn) acquire(ctx context.Context, urgent bool) error {
	t.mu.Lock()
	if !t.busy {
		t.busy = true
		t.mu.Unlock()
		return nil
	}
	ch := make(chan struct{})
	if urgent {
		t.urgent = append(t.urgent, ch)
	} else {
		t.normal = append(t.normal, ch)
	}
	t.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.remove(ch) {
			return ctx.Err()
		}
		// Granted while giving up: pass the turn on rather than leak it.
		t.handOff()
		return ctx.Err()
	}
}

// release passes the turn to the next waiter.
func (t *turn) release() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.handOff()
}

// handOff gives the turn, which the caller holds, to the first urgent or else the first normal
// waiter; with none it frees it. t.mu must be held.
func (t *turn) handOff() {
	for _, q := range []*[]chan struct{}{&t.urgent, &t.normal} {
		if len(*q) > 0 {
			next := (*q)[0]
			(*q)[0] = nil
			*q = (*q)[1:]
			close(next)
			return
		}
	}
	t.busy = false
}

// remove takes a waiter that gave up out of its queue; false means it was already granted.
func (t *turn) remove(ch chan struct{}) bool {
	for _, q := range []*[]chan struct{}{&t.urgent, &t.normal} {
		for i, c := range *q {
			if c == ch {
				*q = append((*q)[:i], (*q)[i+1:]...)
				return true
			}
		}
	}
	return false
}
