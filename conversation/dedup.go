package conversation

import (
	"context"
	"errors"
	"time"

	"threadflow/db"
	"threadflow/groupcommit"
)

// BatchMarker records many inbound events in one transaction; db.Store implements it.
type BatchMarker interface {
	MarkInboundMany(ctx context.Context, events []db.InboundEvent) (first []bool, err error)
}

// markTimeout bounds one write of a batch. Callers wait for their batch's write whatever their own
// context does (see BatchDeduper.MarkInbound), so the write must end on its own.
const markTimeout = 15 * time.Second

// BatchDeduper is a Deduper that records the events of concurrent Submits together (group commit,
// package groupcommit): a burst of 50 messages costs two or three transactions instead of 50, so
// the last message of a burst no longer waits behind 49 writes, each also contending for CPU with
// the handlers of the messages before it (BENCHMARKS.md, dispatch). A lone message pays no extra
// delay. The guarantee is unchanged: Submit queues a message only after its event is durably
// recorded.
type BatchDeduper struct {
	batcher *groupcommit.Batcher[db.InboundEvent, markResult]
}

type markResult struct {
	first bool
	err   error
}

// NewBatchDeduper returns a BatchDeduper writing through m.
func NewBatchDeduper(m BatchMarker) *BatchDeduper {
	return &BatchDeduper{batcher: &groupcommit.Batcher[db.InboundEvent, markResult]{
		Max:   db.MaxInboundBatch,
		Write: func(events []db.InboundEvent) []markResult { return markAll(m, events) },
	}}
}

var _ Deduper = (*BatchDeduper)(nil)

// MarkInbound records the event with whatever other events are waiting, and reports whether it
// was new. Once queued it waits for the write even if ctx ends first: an event the write records as
// new must be handled, or its redelivery would be dropped as a duplicate of a message nobody acted
// on. The write is bounded by markTimeout.
func (d *BatchDeduper) MarkInbound(ctx context.Context, platform, eventID string) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	res := d.batcher.Do(db.InboundEvent{Platform: platform, EventID: eventID})
	return res.first, res.err
}

// markAll records one batch and answers each event.
func markAll(m BatchMarker, events []db.InboundEvent) []markResult {
	ctx, cancel := context.WithTimeout(context.Background(), markTimeout)
	defer cancel()
	first, err := m.MarkInboundMany(ctx, events)
	if err == nil && len(first) != len(events) {
		err = errors.New("conversation: the store answered for a different number of events")
	}
	out := make([]markResult, len(events))
	for i := range events {
		if err != nil {
			out[i] = markResult{err: err}
			continue
		}
		out[i] = markResult{first: first[i]}
	}
	return out
}
