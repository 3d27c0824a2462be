package db

import "context"

// InboundEvent names one event a chat platform delivered, for de-duplication: the platform and
// the platform's own id for the event (a Slack envelope id, a Discord interaction or message id).
type InboundEvent struct {
	Platform string
	EventID  string
}

// DistinctInbound returns events without repeats, in order, and where each first occurs in events.
// Engines insert the distinct events and report an event new only at its first position.
func DistinctInbound(events []InboundEvent) (distinct []InboundEvent, firstAt map[InboundEvent]int) {
	firstAt = make(map[InboundEvent]int, len(events))
	for i, e := range events {
		if _, seen := firstAt[e]; !seen {
			firstAt[e] = i
			distinct = append(distinct, e)
		}
	}
	return distinct, firstAt
}

// MarkOne records one event through an engine's MarkInboundMany: how engines implement MarkInbound.
func MarkOne(ctx context.Context, many func(context.Context, []InboundEvent) ([]bool, error), platform, eventID string) (bool, error) {
	first, err := many(ctx, []InboundEvent{{Platform: platform, EventID: eventID}})
	if err != nil {
		return false, err
	}
	return first[0], nil
}
