package db

import (
	"context"
	"fmt"
	"time"
)

// InboundEvent names one event a chat platform delivered, for de-duplication: the platform and
// the platform's own id for the event (a Slack envelope id, a Discord interaction or message id).
type InboundEvent struct {
	Platform string
	EventID  string
}

// MaxKeptMessage bounds the message an inbound event keeps (KeptEvent.Message), in bytes: a chat
// message of the longest text a platform sends, with who sent it and where, fits several times over.
// The column's CHECK holds the same figure.
const MaxKeptMessage = 64 << 10

// KeptEvent is an inbound event recorded with the message it carried, held by one process (Owner)
// until it is handled: if that process dies first, the claim lapses at ClaimUntil and another takes
// the message over (docs/design-notes.md, "A request is kept until it is handled"). An event with no
// Message is recorded only to de-duplicate it: it is handled as it is recorded.
type KeptEvent struct {
	InboundEvent
	Message []byte        // the encoded message, at most MaxKeptMessage bytes; nil keeps nothing
	Owner   string        // the keeping process's token, fresh per start
	TTL     time.Duration // how long the claim holds unless renewed (KeepInbound)
	// Takeovers is how many times a process took the event over from one that died holding it,
	// the claim that returned it included (ClaimInbound).
	Takeovers int
}

// Check says what is wrong with e as a kept event, or nil.
func (e KeptEvent) Check() error {
	switch {
	case e.Platform == "" || e.EventID == "":
		return fmt.Errorf("inbound event %q of %q: need a platform and an event id", e.EventID, e.Platform)
	case len(e.Message) > MaxKeptMessage:
		return fmt.Errorf("inbound %s event %s: its message is %d bytes, more than the %d kept", e.Platform, e.EventID, len(e.Message), MaxKeptMessage)
	case e.Message != nil && (e.Owner == "" || e.TTL <= 0):
		return fmt.Errorf("inbound %s event %s: a kept message needs an owner and a claim duration", e.Platform, e.EventID)
	}
	return nil
}

// DistinctKept returns events without repeats of the same event, in order, and where each first
// occurs in events. Engines insert the distinct events and report an event new only at its first
// position.
func DistinctKept(events []KeptEvent) (distinct []KeptEvent, firstAt map[InboundEvent]int, err error) {
	firstAt = make(map[InboundEvent]int, len(events))
	for i, e := range events {
		if err := e.Check(); err != nil {
			return nil, nil, err
		}
		if _, seen := firstAt[e.InboundEvent]; !seen {
			firstAt[e.InboundEvent] = i
			distinct = append(distinct, e)
		}
	}
	return distinct, firstAt, nil
}

// MarkOne records one event, keeping no message, through an engine's KeepInbound: how engines
// implement MarkInbound.
func MarkOne(ctx context.Context, keep func(context.Context, []KeptEvent) ([]bool, error), platform, eventID string) (bool, error) {
	first, err := keep(ctx, []KeptEvent{{InboundEvent: InboundEvent{Platform: platform, EventID: eventID}}})
	if err != nil {
		return false, err
	}
	return first[0], nil
}
