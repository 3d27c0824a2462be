package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"threadflow/db"
)

// scanner is a *sql.Row or *sql.Rows.
type scanner interface{ Scan(dest ...any) error }

func scanRun(row scanner) (db.Run, error) {
	var (
		r                                     db.Run
		meta, inputs                          string
		expires, heartbeat, started, finished sql.NullInt64
		created, queued                       int64
	)
	err := row.Scan(&r.ID, &r.Workflow, &r.ConversationID, &r.ParentConversationID, &r.UserID, &r.UserName, &r.UserMessage,
		&r.Status, &r.WorkingPath, &r.WorkflowSource, &r.WorkflowDigest, &meta, &r.Attempt, &r.Recoveries,
		&r.LeaseOwner, &r.LeaseToken, &expires, &heartbeat, &created, &queued, &started, &finished,
		&r.WorkspaceHome, &r.WorkspaceRemote, &inputs, &r.Group, &r.ParentRunID, &r.ParentNode)
	if err != nil {
		return db.Run{}, translate(err)
	}
	if r.Inputs, err = db.DecodeInputs(r.ID, inputs); err != nil {
		return db.Run{}, err
	}
	if err := json.Unmarshal([]byte(meta), &r.Meta); err != nil {
		return db.Run{}, fmt.Errorf("run %s: stored meta is not valid: %w", r.ID, err)
	}
	r.LeaseExpiresAt, r.HeartbeatAt = fromNull(expires), fromNull(heartbeat)
	r.CreatedAt, r.QueuedAt = fromMicros(created), fromMicros(queued)
	r.StartedAt, r.FinishedAt = fromNull(started), fromNull(finished)
	return r, nil
}

func scanRuns(rows *sql.Rows) ([]db.Run, error) { return collect(rows, scanRun) }

// queryAll runs a query with q and reads every row with scan.
func queryAll[T any](ctx context.Context, q queryer, query string, args []any, scan func(scanner) (T, error)) ([]T, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, translate(err)
	}
	return collect(rows, scan)
}

// collect reads every row of rows with scan, and closes them.
func collect[T any](rows *sql.Rows, scan func(scanner) (T, error)) ([]T, error) {
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	return out, translate(rows.Err())
}

// micros is how times are stored: unix microseconds, UTC.
func micros(t time.Time) int64 { return t.UnixMicro() }

// nullMicros stores the zero time as NULL.
func nullMicros(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMicro()
}

func fromMicros(us int64) time.Time { return time.UnixMicro(us).UTC() }

func fromNull(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return fromMicros(n.Int64)
}

// scanIDs reads a column of ids.
func scanIDs(rows *sql.Rows) ([]string, error) {
	return collect(rows, func(row scanner) (string, error) {
		var id string
		err := row.Scan(&id)
		return id, translate(err)
	})
}
