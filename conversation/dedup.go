package conversation

import (
	"context"
	"errors"
	"sync"
	"time"

	"threadflow/db"
)

// BatchMarker records many inbound events in one transaction; db.Store implements it.
type BatchMarker interface {
	MarkInboundMany(ctx context.Context, events []db.InboundEvent) (first []bool, err error)
}

// markTimeout bounds one write of a batch. Callers wait for their batch's write whatever their own
// context does (see BatchDeduper.MarkInbound), so the write must end on its own.
const markTimeout = 15 * time.Second

// BatchDeduper is a Deduper that records the events of concurrent Submits together (group commit).
// While one write is in flight, the events that arrive queue up and go into the next write, in one
// transaction. A burst of 50 messages costs two or three transactions instead of 50, so the last
// message of a burst no longer waits behind 49 writes, each also contending for CPU with the
// handlers of the messages before it (BENCHMARKS.md, dispatch). Nothing waits on a timer: an event
// arriving while no write is in flight is written at once, so a lone message pays no extra delay.
// The guarantee is unchanged: Submit queues a message only after its event is durably recorded.
type BatchDeduper struct {
	m BatchMarker

	mu      sync.Mutex
	pending []markRequest
	writing bool // a writer goroutine is draining pending
}

type markRequest struct {
	event db.InboundEvent
	done  chan markResult // buffered: the writer never blocks on a caller
}

type markResult struct {
	first bool
	err   error
}

// NewBatchDeduper returns a BatchDeduper writing through m.
func NewBatchDeduper(m BatchMarker) *BatchDeduper { return &BatchDeduper{m: m} }

var _ Deduper = (*BatchDeduper)(nil)

// MarkInbound records the event with whatever other events are waiting, and reports whether it
// was new. Once queued it waits for the write even if ctx ends first: an event the write records as
// new must be handled, or its redelivery would be dropped as a duplicate of a message nobody acted
// on. The write is bounded by markTimeout.
func (d *BatchDeduper) MarkInbound(ctx context.Context, platform, eventID string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	r := markRequest{event: db.InboundEvent{Platform: platform, EventID: eventID}, done: make(chan markResult, 1)}
	d.mu.Lock()
	d.pending = append(d.pending, r)
	start := !d.writing
	d.writing = true
	d.mu.Unlock()
	if start {
		go d.drain()
	}
	res := <-r.done
	return res.first, res.err
}

// drain writes the pending events, a batch at a time, until none are left.
func (d *BatchDeduper) drain() {
	for {
		batch := d.take()
		if len(batch) == 0 {
			return
		}
		d.write(batch)
	}
}

// take removes up to db.MaxInboundBatch pending requests; when there are none it ends this writer's
// turn under the same lock, so a request queued afterwards starts a new writer.
func (d *BatchDeduper) take() []markRequest {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := min(len(d.pending), db.MaxInboundBatch)
	if n == 0 {
		d.writing = false
		d.pending = nil
		return nil
	}
	batch := d.pending[:n:n]
	d.pending = d.pending[n:]
	return batch
}

// write records one batch and answers each request.
func (d *BatchDeduper) write(batch []markRequest) {
	events := make([]db.InboundEvent, len(batch))
	for i, r := range batch {
		events[i] = r.event
	}
	ctx, cancel := context.WithTimeout(context.Background(), markTimeout)
	defer cancel()
	first, err := d.m.MarkInboundMany(ctx, events)
	if err == nil && len(first) != len(batch) {
		err = errors.New("conversation: the store answered for a different number of events")
	}
	for i, r := range batch {
		if err != nil {
			r.done <- markResult{err: err}
			continue
		}
		r.done <- markResult{first: first[i]}
	}
}
