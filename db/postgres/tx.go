package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"

	"threadflow/db"
)

// inTx runs fn in one transaction, committing when it returns nil, and translates the error.
func (s *Store) inTx(ctx context.Context, fn func(tx pgx.Tx) error) error {
	return translate(pgx.BeginFunc(ctx, s.pool, fn))
}

// cas is one compare-and-set transition of a run. query is a single UPDATE whose WHERE clause holds
// the expected statuses (and lease token) and which returns runColumns; when it matches, events are
// appended in the same transaction.
type cas struct {
	op     db.Op
	runID  string
	lease  *db.Lease                                  // the worker's lease when the write carries one
	query  string                                     // UPDATE ... RETURNING runColumns
	args   []any                                      // query's arguments
	scan   func(pgx.Row) (db.Run, error)              // reads query's row; scanRun when nil
	events func(r db.Run) []db.Event                  // what to append for the updated run
	failed func(ctx context.Context, tx pgx.Tx) error // explains a miss before casFailed does; optional
}

// transition runs c in one transaction. A miss is explained by casFailed (or c.failed first).
func (s *Store) transition(ctx context.Context, c cas) (db.Run, error) {
	scan := c.scan
	if scan == nil {
		scan = scanRun
	}
	var out db.Run
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		r, err := scan(tx.QueryRow(ctx, c.query, c.args...))
		if errors.Is(err, pgx.ErrNoRows) {
			if c.failed != nil {
				if err := c.failed(ctx, tx); err != nil {
					return err
				}
			}
			out, err = casFailed(ctx, tx, c.op, c.runID, c.lease)
			return err
		}
		if err != nil {
			return err
		}
		out = r
		for _, e := range c.events(r) {
			if _, err := appendEvent(ctx, tx, e); err != nil {
				return err
			}
		}
		return nil
	})
	if err == nil {
		s.log.Debug("postgres.run_transitioned", zap.String("run", c.runID), zap.String("op", string(c.op)),
			zap.String("status", string(out.Status)))
	}
	return out, err
}

// casFailed explains why a compare-and-set matched no row by reading the run in the same
// transaction. A lease write found already done (the run is in the op's target status and still
// carries the caller's token) is an idempotent replay: the run is returned with no error.
func casFailed(ctx context.Context, tx pgx.Tx, op db.Op, runID string, lease *db.Lease) (db.Run, error) {
	r, err := scanRun(tx.QueryRow(ctx, `SELECT `+runColumns+` FROM runs WHERE id = $1`, runID))
	if errors.Is(err, pgx.ErrNoRows) {
		return db.Run{}, &db.TransitionError{RunID: runID, Op: op, Lease: lease != nil}
	}
	if err != nil {
		return db.Run{}, err
	}
	if lease != nil && lease.Token != "" && r.Status == db.Transitions[op].To && r.LeaseToken == lease.Token {
		return r, nil
	}
	return db.Run{}, &db.TransitionError{RunID: runID, Op: op, Found: r.Status, Lease: lease != nil}
}

// fromStatuses is the statuses op leaves from, as a query argument.
func fromStatuses(op db.Op) []string {
	from := db.Transitions[op].From
	out := make([]string, len(from))
	for i, s := range from {
		out[i] = string(s)
	}
	return out
}

// event builds an event of the run at time at; data is a JSON object of plain values.
func event(r db.Run, typ db.EventType, node string, at time.Time, data any) db.Event {
	return db.Event{RunID: r.ID, Type: typ, NodeID: node, Data: mustJSON(data), At: at}
}

// mustJSON encodes values the store builds itself (maps of strings and numbers, db.RunError,
// db.Pause), which always encode.
func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic("postgres: encode event data: " + err.Error())
	}
	return b
}
