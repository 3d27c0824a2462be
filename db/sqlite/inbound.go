package sqlite

import (
	"context"
	"fmt"
	"time"

	"threadflow/db"
)

// MarkInbound records a platform event id; first is false when it was recorded before.
func (s *Store) MarkInbound(ctx context.Context, platform, eventID string) (bool, error) {
	return db.MarkOne(ctx, s.KeepInbound, platform, eventID)
}

// KeepInbound records events in one transaction; first[i] is whether events[i] was new. Each event
// is its own INSERT: in SQLite a statement is a function call, not a round trip. The transaction is
// what a batch saves: one commit instead of one per event.
func (s *Store) KeepInbound(ctx context.Context, events []db.KeptEvent) ([]bool, error) {
	distinct, firstAt, err := db.DistinctKept(events)
	if err != nil {
		return nil, err
	}
	first := make([]bool, len(events))
	if len(distinct) == 0 {
		return first, nil
	}
	now := s.clock()
	err = s.writeUrgent(ctx, func(tx *wtx) error {
		for _, e := range distinct {
			q, args := dialect.KeepInbound(e, now)
			res, err := tx.ExecContext(ctx, q, args...)
			if err != nil {
				return fmt.Errorf("keep inbound %s event: %w", e.Platform, translate(err))
			}
			n, err := res.RowsAffected()
			if err != nil {
				return fmt.Errorf("keep inbound %s event: %w", e.Platform, translate(err))
			}
			first[firstAt[e.InboundEvent]] = n == 1
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return first, nil
}

// HandledInbound records the events handled, in one transaction.
func (s *Store) HandledInbound(ctx context.Context, events []db.InboundEvent) error {
	if len(events) == 0 {
		return nil
	}
	now := s.clock()
	return s.write(ctx, func(tx *wtx) error {
		for _, e := range events {
			q, args := dialect.HandledInbound(e, now)
			if _, err := tx.ExecContext(ctx, q, args...); err != nil {
				return fmt.Errorf("record inbound %s event handled: %w", e.Platform, translate(err))
			}
		}
		return nil
	})
}

// RenewInbound extends the claims owner holds.
func (s *Store) RenewInbound(ctx context.Context, owner string, ttl time.Duration) (int, error) {
	var n int64
	err := s.write(ctx, func(tx *wtx) error {
		q, args := dialect.RenewInbound(owner, s.clock().Add(ttl))
		res, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			return translate(err)
		}
		n, err = res.RowsAffected()
		return translate(err)
	})
	if err != nil {
		return 0, fmt.Errorf("renew kept inbound events: %w", err)
	}
	return int(n), nil
}

// ClaimInbound takes over lapsed kept events of platform, in one statement.
func (s *Store) ClaimInbound(ctx context.Context, platform, owner string, ttl time.Duration, n int) ([]db.KeptEvent, error) {
	if owner == "" || ttl <= 0 || n <= 0 {
		return nil, fmt.Errorf("claim kept inbound events: need an owner, a positive claim duration and a count (got %q, %s, %d)", owner, ttl, n)
	}
	var out []db.KeptEvent
	err := s.write(ctx, func(tx *wtx) error {
		now := s.clock()
		q, args := dialect.ClaimInbound(platform, owner, now, now.Add(ttl), n)
		rows, err := tx.QueryContext(ctx, q, args...)
		if err != nil {
			return translate(err)
		}
		defer rows.Close()
		for rows.Next() {
			e := db.KeptEvent{Owner: owner, TTL: ttl}
			var msg string
			if err := rows.Scan(&e.Platform, &e.EventID, &msg, &e.Takeovers); err != nil {
				return translate(err)
			}
			e.Message = []byte(msg)
			out = append(out, e)
		}
		return translate(rows.Err())
	})
	if err != nil {
		return nil, fmt.Errorf("claim kept inbound events: %w", err)
	}
	return out, nil
}
