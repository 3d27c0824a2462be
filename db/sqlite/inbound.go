package sqlite

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"threadflow/db"
)

// MarkInbound records a platform event id; first is false when it was recorded before.
func (s *Store) MarkInbound(ctx context.Context, platform, eventID string) (bool, error) {
	return db.MarkOne(ctx, s.MarkInboundMany, platform, eventID)
}

// MarkInboundMany records events in one transaction; first[i] is whether events[i] was new.
func (s *Store) MarkInboundMany(ctx context.Context, events []db.InboundEvent) ([]bool, error) {
	distinct, firstAt := db.DistinctInbound(events)
	first := make([]bool, len(events))
	if len(distinct) == 0 {
		return first, nil
	}
	err := s.writeUrgent(ctx, func(tx *wtx) error {
		for chunk := range slices.Chunk(distinct, db.MaxInboundBatch) {
			if err := insertInbound(ctx, tx, chunk, micros(s.clock()), func(e db.InboundEvent) { first[firstAt[e]] = true }); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return first, nil
}

// insertInbound inserts events that are not recorded yet and calls inserted for each new one.
func insertInbound(ctx context.Context, tx *wtx, events []db.InboundEvent, at int64, inserted func(db.InboundEvent)) error {
	args := make([]any, 0, 3*len(events))
	for _, e := range events {
		args = append(args, e.Platform, e.EventID, at)
	}
	values := strings.Repeat("(?, ?, ?), ", len(events))
	rows, err := tx.QueryContext(ctx, `INSERT INTO inbound_events (platform, event_id, received_at) VALUES `+
		values[:len(values)-2]+` ON CONFLICT (platform, event_id) DO NOTHING RETURNING platform, event_id`, args...)
	if err != nil {
		return fmt.Errorf("mark %d inbound events: %w", len(events), translate(err))
	}
	defer rows.Close()
	for rows.Next() {
		var e db.InboundEvent
		if err := rows.Scan(&e.Platform, &e.EventID); err != nil {
			return fmt.Errorf("mark inbound events: %w", translate(err))
		}
		inserted(e)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("mark inbound events: %w", translate(err))
	}
	return nil
}
