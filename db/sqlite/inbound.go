package sqlite

import (
	"context"
	"fmt"

	"threadflow/db"
)

// MarkInbound records a platform event id; first is false when it was recorded before.
func (s *Store) MarkInbound(ctx context.Context, platform, eventID string) (bool, error) {
	return db.MarkOne(ctx, s.MarkInboundMany, platform, eventID)
}

// MarkInboundMany records events in one transaction; first[i] is whether events[i] was new. Each
// event is its own INSERT of one prepared statement: in SQLite a statement is a function call, not a
// round trip, and one statement text keeps the statement cache from filling with a text per batch
// size. The transaction is what a batch saves: one commit instead of one per event.
func (s *Store) MarkInboundMany(ctx context.Context, events []db.InboundEvent) ([]bool, error) {
	distinct, firstAt := db.DistinctInbound(events)
	first := make([]bool, len(events))
	if len(distinct) == 0 {
		return first, nil
	}
	at := micros(s.clock())
	err := s.writeUrgent(ctx, func(tx *wtx) error {
		for _, e := range distinct {
			res, err := tx.ExecContext(ctx, `INSERT INTO inbound_events (platform, event_id, received_at) VALUES (?, ?, ?)
				ON CONFLICT (platform, event_id) DO NOTHING`, e.Platform, e.EventID, at)
			if err != nil {
				return fmt.Errorf("mark inbound %s event: %w", e.Platform, translate(err))
			}
			n, err := res.RowsAffected()
			if err != nil {
				return fmt.Errorf("mark inbound %s event: %w", e.Platform, translate(err))
			}
			first[firstAt[e]] = n == 1
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return first, nil
}
