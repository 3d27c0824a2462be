package conversation

import (
	"context"
	"errors"
	"time"

	"threadflow/db"
	"threadflow/groupcommit"
)

// Keeper keeps inbound events, with their messages, until they are handled (docs/design-notes.md,
// "A request is kept until it is handled"); db.Store implements it, and BatchKeeper writes the
// events of concurrent callers together.
type Keeper interface {
	KeepInbound(ctx context.Context, events []db.KeptEvent) (first []bool, err error)
	HandledInbound(ctx context.Context, events []db.InboundEvent) error
	RenewInbound(ctx context.Context, owner string, ttl time.Duration) (int, error)
	ClaimInbound(ctx context.Context, platform, owner string, ttl time.Duration, n int) ([]db.KeptEvent, error)
}

// writeTimeout bounds one write of a batch. Callers wait for their batch's write whatever their
// own context does (see BatchKeeper.KeepInbound), so the write must end on its own.
const writeTimeout = 15 * time.Second

// BatchKeeper is a Keeper that records the events of concurrent Submits together, and the handled
// marks of concurrent handlers together (group commit, package groupcommit): a burst of 50
// messages costs two or three transactions instead of 50, so the last message of a burst no longer
// waits behind 49 writes (BENCHMARKS.md, dispatch). A lone message pays no extra delay. The
// guarantee is unchanged: Submit queues a message only after its event is durably recorded.
type BatchKeeper struct {
	Keeper
	keep    *groupcommit.Batcher[db.KeptEvent, keepResult]
	handled *groupcommit.Batcher[db.InboundEvent, error]
}

type keepResult struct {
	first bool
	err   error
}

// NewBatchKeeper returns a BatchKeeper writing through k.
func NewBatchKeeper(k Keeper) *BatchKeeper {
	return &BatchKeeper{
		Keeper: k,
		keep: &groupcommit.Batcher[db.KeptEvent, keepResult]{
			Max:   db.MaxInboundBatch,
			Write: func(events []db.KeptEvent) []keepResult { return keepAll(k, events) },
		},
		handled: &groupcommit.Batcher[db.InboundEvent, error]{
			Max:   db.MaxInboundBatch,
			Write: func(events []db.InboundEvent) []error { return handleAll(k, events) },
		},
	}
}

var _ Keeper = (*BatchKeeper)(nil)

// KeepInbound records the events with whatever other events are waiting, and reports which were
// new. Once queued it waits for the write even if ctx ends first: an event the write records as
// new must be handled, or its redelivery would be dropped as a duplicate of a message nobody acted
// on. The write is bounded by writeTimeout.
func (b *BatchKeeper) KeepInbound(ctx context.Context, events []db.KeptEvent) ([]bool, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	first := make([]bool, len(events))
	for i, e := range events {
		res := b.keep.Do(e)
		if res.err != nil {
			return nil, res.err
		}
		first[i] = res.first
	}
	return first, nil
}

// MarkInbound records an event keeping no message (a Discord autocomplete, claimed only so that
// one replica answers it).
func (b *BatchKeeper) MarkInbound(ctx context.Context, platform, eventID string) (bool, error) {
	return db.MarkOne(ctx, b.KeepInbound, platform, eventID)
}

// HandledInbound records the events handled with whatever other handled events are waiting.
func (b *BatchKeeper) HandledInbound(_ context.Context, events []db.InboundEvent) error {
	var errs []error
	for _, e := range events {
		errs = append(errs, b.handled.Do(e))
	}
	return errors.Join(errs...)
}

// keepAll records one batch and answers each event. A batch the store refuses because of one event
// (a message it cannot keep) is written again without it, so one bad event fails only its sender.
func keepAll(k Keeper, events []db.KeptEvent) []keepResult {
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	out := make([]keepResult, len(events))
	var ok []db.KeptEvent
	var at []int
	for i, e := range events {
		if err := e.Check(); err != nil {
			out[i] = keepResult{err: err}
			continue
		}
		ok, at = append(ok, e), append(at, i)
	}
	if len(ok) == 0 {
		return out
	}
	first, err := k.KeepInbound(ctx, ok)
	if err == nil && len(first) != len(ok) {
		err = errors.New("conversation: the store answered for a different number of events")
	}
	for j, i := range at {
		if err != nil {
			out[i] = keepResult{err: err}
			continue
		}
		out[i] = keepResult{first: first[j]}
	}
	return out
}

// handleAll records one batch handled; every event of it gets the write's error.
func handleAll(k Keeper, events []db.InboundEvent) []error {
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	err := k.HandledInbound(ctx, events)
	out := make([]error, len(events))
	for i := range out {
		out[i] = err
	}
	return out
}
