// Package groupcommit writes the requests of concurrent callers together: while one write is in
// flight, the requests that arrive queue up and go into the next write, one transaction for all of
// them. Nothing waits on a timer: a request arriving while no write is in flight is written at
// once, so a lone caller pays no extra delay, and under a burst the number of commits, not the
// number of callers, is what grows slowly.
//
// It is the one shape behind the inbound-event deduper (conversation.BatchKeeper) and the
// creation of runs on SQLite's single writer (db/sqlite Store.CreateRun): a burst of 500 messages
// then costs a few transactions instead of 500, each of which every later message waited behind.
package groupcommit

import "sync"

// Batcher hands the requests of concurrent Do calls to write, at most Max at a time, in the order
// they arrived.
type Batcher[Req, Res any] struct {
	// Write writes a batch and returns one result per request, in order. It runs on one goroutine
	// at a time and must end on its own (callers wait for it whatever their contexts do).
	Write func(batch []Req) []Res
	// Max bounds a batch; 0 means no bound.
	Max int

	mu      sync.Mutex
	pending []request[Req, Res]
	writing bool // a writer goroutine is draining pending
}

type request[Req, Res any] struct {
	req  Req
	done chan Res // buffered: the writer never blocks on a caller
}

// Do queues req with whatever else waits and returns its result once its batch is written.
func (b *Batcher[Req, Res]) Do(req Req) Res {
	r := request[Req, Res]{req: req, done: make(chan Res, 1)}
	b.mu.Lock()
	b.pending = append(b.pending, r)
	start := !b.writing
	b.writing = true
	b.mu.Unlock()
	if start {
		go b.drain()
	}
	return <-r.done
}

// drain writes the pending requests, a batch at a time, until none are left.
func (b *Batcher[Req, Res]) drain() {
	for {
		batch := b.take()
		if len(batch) == 0 {
			return
		}
		reqs := make([]Req, len(batch))
		for i, r := range batch {
			reqs[i] = r.req
		}
		results := b.Write(reqs)
		for i, r := range batch {
			r.done <- results[i]
		}
	}
}

// take removes up to Max pending requests; when there are none it ends this writer's turn under
// the same lock, so a request queued afterwards starts a new writer.
func (b *Batcher[Req, Res]) take() []request[Req, Res] {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := len(b.pending)
	if b.Max > 0 {
		n = min(n, b.Max)
	}
	if n == 0 {
		b.writing = false
		b.pending = nil
		return nil
	}
	batch := b.pending[:n:n]
	b.pending = b.pending[n:]
	return batch
}

// Pending is how many requests wait for a write that has not started.
func (b *Batcher[Req, Res]) Pending() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.pending)
}
