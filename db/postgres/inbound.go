package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"threadflow/db"
)

// Kept inbound events on PostgreSQL. A batch of statements sent together (pgx.Batch) runs as one
// implicit transaction in one round trip, so a burst of events costs one commit.

// MarkInbound records a platform event id as handled; first is false when a replica (or an earlier
// delivery) recorded it before.
func (s *Store) MarkInbound(ctx context.Context, platform, eventID string) (bool, error) {
	return db.MarkOne(ctx, s.KeepInbound, platform, eventID)
}

// KeepInbound records events in one transaction; first[i] is whether events[i] was new.
func (s *Store) KeepInbound(ctx context.Context, events []db.KeptEvent) ([]bool, error) {
	distinct, firstAt, err := db.DistinctKept(events)
	if err != nil {
		return nil, err
	}
	first := make([]bool, len(events))
	if len(distinct) == 0 {
		return first, nil
	}
	now := s.now()
	b := &pgx.Batch{}
	for _, e := range distinct {
		q, args := dialect.KeepInbound(e, now)
		b.Queue(q, args...)
	}
	res := s.pool.SendBatch(ctx, b)
	for _, e := range distinct {
		tag, err := res.Exec()
		if err != nil {
			return nil, fmt.Errorf("keep %d inbound events: %w", len(distinct), translate(errors.Join(err, res.Close())))
		}
		first[firstAt[e.InboundEvent]] = tag.RowsAffected() == 1
	}
	if err := res.Close(); err != nil {
		return nil, fmt.Errorf("keep %d inbound events: %w", len(distinct), translate(err))
	}
	return first, nil
}

// HandledInbound records the events handled, in one transaction.
func (s *Store) HandledInbound(ctx context.Context, events []db.InboundEvent) error {
	if len(events) == 0 {
		return nil
	}
	now := s.now()
	b := &pgx.Batch{}
	for _, e := range events {
		q, args := dialect.HandledInbound(e, now)
		b.Queue(q, args...)
	}
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("record %d inbound events handled: %w", len(events), translate(err))
	}
	return nil
}

// RenewInbound extends the claims owner holds.
func (s *Store) RenewInbound(ctx context.Context, owner string, ttl time.Duration) (int, error) {
	q, args := dialect.RenewInbound(owner, s.now().Add(ttl))
	tag, err := s.pool.Exec(ctx, q, args...)
	if err != nil {
		return 0, fmt.Errorf("renew kept inbound events: %w", translate(err))
	}
	return int(tag.RowsAffected()), nil
}

// ClaimInbound takes over lapsed kept events of platform, in one statement.
func (s *Store) ClaimInbound(ctx context.Context, platform, owner string, ttl time.Duration, n int) ([]db.KeptEvent, error) {
	if owner == "" || ttl <= 0 || n <= 0 {
		return nil, fmt.Errorf("claim kept inbound events: need an owner, a positive claim duration and a count (got %q, %s, %d)", owner, ttl, n)
	}
	now := s.now()
	q, args := dialect.ClaimInbound(platform, owner, now, now.Add(ttl), n)
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("claim kept inbound events: %w", translate(err))
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (db.KeptEvent, error) {
		e := db.KeptEvent{Owner: owner, TTL: ttl}
		var msg string
		err := row.Scan(&e.Platform, &e.EventID, &msg, &e.Takeovers)
		e.Message = []byte(msg)
		return e, err
	})
	if err != nil {
		return nil, fmt.Errorf("claim kept inbound events: %w", translate(err))
	}
	return out, nil
}
