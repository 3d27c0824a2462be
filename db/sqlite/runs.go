package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
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
	rows, err := s.r.QueryContext(ctx, `SELECT `+runColumns+` FROM runs WHERE id LIKE ? ESCAPE '\' ORDER BY id LIMIT ?`,
		escapeLike(prefix)+"%", db.ListLimit(limit))
	if err != nil {
		return nil, fmt.Errorf("find runs by prefix: %w", translate(err))
	}
	return scanRuns(rows)
}

// escapeLike makes s match literally in a LIKE pattern with ESCAPE '\'.
func escapeLike(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// FindResumable returns the newest failed or paused run of workflow in the parent conversation.
func (s *Store) FindResumable(ctx context.Context, workflow, parentConversationID string) (db.Run, error) {
	r, err := scanRun(s.r.QueryRowContext(ctx, `SELECT `+runColumns+` FROM runs
		WHERE workflow = ? AND parent_conversation_id = ? AND status IN (?, ?)
		ORDER BY created_at DESC, id DESC LIMIT 1`,
		workflow, parentConversationID, string(db.StatusFailed), string(db.StatusPaused)))
	if err != nil {
		return db.Run{}, fmt.Errorf("find resumable %s run: %w", workflow, err)
	}
	return r, nil
}

// NextLeaseExpiry returns the earliest lease expiry of a running run at or after now (one step of
// the runs_rescue index); ok is false when there is none.
func (s *Store) NextLeaseExpiry(ctx context.Context) (time.Time, bool, error) {
	var next sql.NullInt64
	err := s.r.QueryRowContext(ctx, `SELECT MIN(lease_expires_at) FROM runs WHERE status = 'running' AND lease_expires_at >= ?`,
		micros(s.clock())).Scan(&next)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("find next lease expiry: %w", translate(err))
	}
	return fromNull(next), next.Valid, nil
}

// ListRuns returns runs matching f, newest first.
func (s *Store) ListRuns(ctx context.Context, f db.RunFilter) ([]db.Run, error) {
	where, args := filter(f)
	rows, err := s.r.QueryContext(ctx, `SELECT `+runColumns+` FROM runs`+where+` ORDER BY created_at DESC, id DESC LIMIT ?`,
		append(args, db.ListLimit(f.Limit))...)
	if err != nil {
		return nil, fmt.Errorf("list runs: %w", translate(err))
	}
	return scanRuns(rows)
}

// filter builds the WHERE clause of f; zero fields do not filter.
func filter(f db.RunFilter) (string, []any) {
	var conds []string
	var args []any
	eq := func(col, v string) {
		if v != "" {
			conds = append(conds, col+" = ?")
			args = append(args, v)
		}
	}
	eq("workflow", f.Workflow)
	eq("conversation_id", f.ConversationID)
	eq("parent_conversation_id", f.ParentConversationID)
	eq("user_id", f.UserID)
	if len(f.Statuses) > 0 {
		conds = append(conds, "status IN (?"+strings.Repeat(", ?", len(f.Statuses)-1)+")")
		for _, st := range f.Statuses {
			args = append(args, string(st))
		}
	}
	if len(conds) == 0 {
		return "", args
	}
	return " WHERE " + strings.Join(conds, " AND "), args
}

// SetRunConversation moves a run to another existing conversation.
func (s *Store) SetRunConversation(ctx context.Context, runID, conversationID string) error {
	return s.write(ctx, func(tx *wtx) error {
		res, err := tx.ExecContext(ctx, `UPDATE runs SET conversation_id = ? WHERE id = ?`, conversationID, runID)
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
