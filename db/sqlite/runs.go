package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"threadflow/db"
)

// GetRun returns one run or db.ErrNotFound.
func (s *Store) GetRun(ctx context.Context, runID string) (db.Run, error) {
	r, err := getRun(ctx, s.r, runID)
	if err != nil {
		return db.Run{}, fmt.Errorf("get run %s: %w", runID, err)
	}
	return r, nil
}

// FindRunsByPrefix returns the runs whose id starts with prefix. LIKE metacharacters in the prefix
// match only themselves.
func (s *Store) FindRunsByPrefix(ctx context.Context, prefix string, limit int) ([]db.Run, error) {
	q, args := dialect.FindRunsByPrefix(prefix, limit)
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("find runs by prefix: %w", translate(err))
	}
	return scanRuns(rows)
}

// FindResumable returns the newest failed or paused run of workflow in the parent conversation.
func (s *Store) FindResumable(ctx context.Context, workflow, parentConversationID string) (db.Run, error) {
	q, args := dialect.FindResumable(workflow, parentConversationID)
	r, err := scanRun(s.r.QueryRowContext(ctx, q, args...))
	if err != nil {
		return db.Run{}, fmt.Errorf("find resumable %s run: %w", workflow, err)
	}
	return r, nil
}

// NextLeaseExpiry returns the earliest lease expiry of a running run at or after now (one step of
// the runs_rescue index); ok is false when there is none.
func (s *Store) NextLeaseExpiry(ctx context.Context) (time.Time, bool, error) {
	var next sql.NullInt64
	q, args := dialect.NextLeaseExpiry(s.clock())
	err := s.r.QueryRowContext(ctx, q, args...).Scan(&next)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("find next lease expiry: %w", translate(err))
	}
	return fromNull(next), next.Valid, nil
}

// ListRuns returns runs matching f, newest first.
func (s *Store) ListRuns(ctx context.Context, f db.RunFilter) ([]db.Run, error) {
	q, args := dialect.ListRuns(f)
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", translate(err))
	}
	return scanRuns(rows)
}

// CountRuns counts the runs matching f per status, in one statement.
func (s *Store) CountRuns(ctx context.Context, f db.RunFilter) (map[db.Status]int, error) {
	q, args := dialect.CountRuns(f)
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("count runs: %w", translate(err))
	}
	defer func() { _ = rows.Close() }()
	out := map[db.Status]int{}
	for rows.Next() {
		var (
			status string
			n      int
		)
		if err := rows.Scan(&status, &n); err != nil {
			return nil, fmt.Errorf("count runs: %w", translate(err))
		}
		out[db.Status(status)] = n
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("count runs: %w", translate(err))
	}
	return out, nil
}

// SetRunConversation moves a run to another existing conversation.
func (s *Store) SetRunConversation(ctx context.Context, runID, conversationID string) error {
	return s.write(ctx, func(tx *wtx) error {
		q, args := dialect.SetRunConversation(runID, conversationID)
		res, err := tx.ExecContext(ctx, q, args...)
		if err != nil {
			return fmt.Errorf("move run %s to conversation %s: %w", runID, conversationID, translate(err))
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return fmt.Errorf("move run %s: %w", runID, orNotFound(translate(err)))
		}
		return nil
	})
}

// orNotFound is err, or db.ErrNotFound when there is none: an UPDATE that matched no row.
func orNotFound(err error) error {
	if err != nil {
		return err
	}
	return db.ErrNotFound
}
