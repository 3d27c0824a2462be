package postgres

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"threadflow/db"
)

// scanRun reads one row of db.RunColumns.
func scanRun(row pgx.Row) (db.Run, error) { return scanRunAnd(row) }

// scanRunAnd reads one row of db.RunColumns followed by the extra columns into extra.
func scanRunAnd(row pgx.Row, extra ...any) (db.Run, error) {
	var (
		r                                     db.Run
		meta                                  []byte
		inputs                                string
		expires, heartbeat, started, finished *time.Time
	)
	dest := []any{&r.ID, &r.Workflow, &r.ConversationID, &r.ParentConversationID, &r.UserID, &r.UserName,
		&r.UserMessage, &r.Status, &r.WorkingPath, &r.WorkflowSource, &r.WorkflowDigest, &meta,
		&r.Attempt, &r.Recoveries, &r.LeaseOwner, &r.LeaseToken, &expires, &heartbeat,
		&r.CreatedAt, &r.QueuedAt, &started, &finished, &r.WorkspaceHome, &r.WorkspaceRemote, &inputs, &r.Group, &r.ParentRunID, &r.ParentNode}
	err := row.Scan(append(dest, extra...)...)
	if err != nil {
		return db.Run{}, err
	}
	if r.Inputs, err = db.DecodeInputs(r.ID, inputs); err != nil {
		return db.Run{}, err
	}
	if err := json.Unmarshal(meta, &r.Meta); err != nil {
		return db.Run{}, fmt.Errorf("run %s: stored meta is not valid: %w", r.ID, err)
	}
	r.CreatedAt, r.QueuedAt = r.CreatedAt.UTC(), r.QueuedAt.UTC()
	r.LeaseExpiresAt, r.HeartbeatAt = orZero(expires), orZero(heartbeat)
	r.StartedAt, r.FinishedAt = orZero(started), orZero(finished)
	return r, nil
}

// collectRuns reads every row of a db.RunColumns query.
func collectRuns(rows pgx.Rows) ([]db.Run, error) {
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (db.Run, error) { return scanRun(row) })
}

// scanEvent reads one row of db.EventColumns.
func scanEvent(row pgx.Row) (db.Event, error) {
	var e db.Event
	var data []byte
	if err := row.Scan(&e.RunID, &e.Seq, &e.Type, &e.NodeID, &e.Attempt, &data, &e.At); err != nil {
		return db.Event{}, err
	}
	e.Data, e.At = json.RawMessage(data), e.At.UTC()
	return e, nil
}

// orZero maps a NULL timestamp to the zero time and others to UTC.
func orZero(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return t.UTC()
}

// queryAll runs a query on q and reads every row with scan; no row is a nil slice, as on SQLite.
func queryAll[T any](ctx context.Context, q querier, query string, args []any, scan func(pgx.Row) (T, error)) ([]T, error) {
	rows, err := q.Query(ctx, query, args...)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.AppendRows([]T(nil), rows, func(row pgx.CollectableRow) (T, error) { return scan(row) })
	return out, translate(err)
}

// querier is what a pool and a transaction share for statements that return rows.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}
