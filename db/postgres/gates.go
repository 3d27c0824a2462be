package postgres

import (
	"context"
	"time"

	"threadflow/db"
)

// NextGateTimer returns when the next gate timer is due; ok is false when no gate has one.
func (s *Store) NextGateTimer(ctx context.Context, reach db.Reach) (time.Time, bool, error) {
	var next *time.Time
	q, args := dialect.NextGateTimer(reach, s.now())
	err := s.pool.QueryRow(ctx, q, args...).Scan(&next)
	if err != nil {
		return time.Time{}, false, translate(err)
	}
	return orZero(next), next != nil, nil
}

// nullTime stores the zero time as NULL.
func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
