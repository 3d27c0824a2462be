package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"threadflow/db"
)

// insertFirstEventSQL is a new run's first event, at the seq db.Dialect.InsertRun took for it.
const insertFirstEventSQL = `INSERT INTO run_events (run_id, seq, type, node_id, attempt, data, at)
VALUES ($1, 1, $2, $3, $4, $5, $6)`

// GetRun returns one run or ErrNotFound.
func (s *Store) GetRun(ctx context.Context, runID string) (db.Run, error) {
	q, args := dialect.GetRun(runID)
	r, err := scanRun(s.pool.QueryRow(ctx, q, args...))
	if errors.Is(err, pgx.ErrNoRows) {
		return db.Run{}, fmt.Errorf("run %s: %w", runID, db.ErrNotFound)
	}
	return r, translate(err)
}

// FindRunsByPrefix returns the runs whose id starts with prefix, newest first. LIKE metacharacters
// in prefix match themselves.
func (s *Store) FindRunsByPrefix(ctx context.Context, prefix string, limit int) ([]db.Run, error) {
	q, args := dialect.FindRunsByPrefix(prefix, limit)
	return s.queryRuns(ctx, q, args...)
}

// FindResumable returns the newest failed or paused run of workflow in the parent conversation, or
// ErrNotFound: the dispatcher's resume gate.
func (s *Store) FindResumable(ctx context.Context, workflow, parentConversationID string) (db.Run, error) {
	q, args := dialect.FindResumable(workflow, parentConversationID)
	r, err := scanRun(s.pool.QueryRow(ctx, q, args...))
	if errors.Is(err, pgx.ErrNoRows) {
		return db.Run{}, fmt.Errorf("resumable run of %s in %s: %w", workflow, parentConversationID, db.ErrNotFound)
	}
	return r, translate(err)
}

// NextLeaseExpiry returns the earliest lease expiry of a running run at or after now (one step of
// runs_rescue_idx); ok is false when there is none.
func (s *Store) NextLeaseExpiry(ctx context.Context) (time.Time, bool, error) {
	var next *time.Time
	q, args := dialect.NextLeaseExpiry(s.now())
	err := s.pool.QueryRow(ctx, q, args...).Scan(&next)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("find next lease expiry: %w", translate(err))
	}
	return orZero(next), next != nil, nil
}

// ListRuns returns the runs matching f, newest first.
func (s *Store) ListRuns(ctx context.Context, f db.RunFilter) ([]db.Run, error) {
	q, args := dialect.ListRuns(f)
	return s.queryRuns(ctx, q, args...)
}

// CountRuns counts the runs matching f per status, in one statement.
func (s *Store) CountRuns(ctx context.Context, f db.RunFilter) (map[db.Status]int, error) {
	q, args := dialect.CountRuns(f)
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("count runs: %w", translate(err))
	}
	out := map[db.Status]int{}
	var (
		status string
		n      int
	)
	_, err = pgx.ForEachRow(rows, []any{&status, &n}, func() error {
		out[db.Status(status)] = n
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("count runs: %w", translate(err))
	}
	return out, nil
}

// queryRuns runs a db.RunColumns query.
func (s *Store) queryRuns(ctx context.Context, q string, args ...any) ([]db.Run, error) {
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, translate(err)
	}
	runs, err := collectRuns(rows)
	return runs, translate(err)
}

// SetRunConversation moves a run to another, existing conversation.
func (s *Store) SetRunConversation(ctx context.Context, runID, conversationID string) error {
	q, args := dialect.SetRunConversation(runID, conversationID)
	tag, err := s.pool.Exec(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("move run %s to conversation %s: %w", runID, conversationID, translate(err))
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("move run %s: %w", runID, db.ErrNotFound)
	}
	return nil
}
