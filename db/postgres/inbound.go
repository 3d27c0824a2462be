package postgres

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"threadflow/db"
)

// MarkInbound records a platform event id as handled; first is false when a replica (or an earlier
// delivery) recorded it before.
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
	mark := func(e db.InboundEvent) { first[firstAt[e]] = true }
	var err error
	if len(distinct) <= db.MaxInboundBatch {
		err = s.insertInbound(ctx, s.pool, distinct, mark) // one statement is atomic: no BEGIN/COMMIT round trips
	} else {
		err = pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
			for chunk := range slices.Chunk(distinct, db.MaxInboundBatch) {
				if err := s.insertInbound(ctx, tx, chunk, mark); err != nil {
					return err
				}
			}
			return nil
		})
	}
	if err != nil {
		return nil, err
	}
	return first, nil
}

// querier is what a pool and a transaction share for statements that return rows.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// insertInbound inserts events that are not recorded yet and calls inserted for each new one.
func (s *Store) insertInbound(ctx context.Context, q querier, events []db.InboundEvent, inserted func(db.InboundEvent)) error {
	platforms, ids := make([]string, len(events)), make([]string, len(events))
	for i, e := range events {
		platforms[i], ids[i] = e.Platform, e.EventID
	}
	rows, err := q.Query(ctx, `INSERT INTO inbound_events (platform, event_id, received_at)
		SELECT p, e, $3 FROM unnest($1::text[], $2::text[]) AS t(p, e)
		ON CONFLICT (platform, event_id) DO NOTHING RETURNING platform, event_id`, platforms, ids, s.now())
	if err != nil {
		return fmt.Errorf("mark %d inbound events: %w", len(events), translate(err))
	}
	var e db.InboundEvent
	_, err = pgx.ForEachRow(rows, []any{&e.Platform, &e.EventID}, func() error { inserted(e); return nil })
	if err != nil {
		return fmt.Errorf("mark %d inbound events: %w", len(events), translate(err))
	}
	return nil
}
