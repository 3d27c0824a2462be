package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"threadflow/db"
)

// write runs fn in a write transaction (BEGIN IMMEDIATE through the DSN's _txlock) and commits it
// when fn returns nil. Writers take turns in arrival order (see turn).
func (s *Store) write(ctx context.Context, fn func(tx *wtx) error) error {
	return s.writeTx(ctx, false, fn)
}

// writeUrgent is write ahead of the queued normal writers.
func (s *Store) writeUrgent(ctx context.Context, fn func(tx *wtx) error) error {
	return s.writeTx(ctx, true, fn)
}

func (s *Store) writeTx(ctx context.Context, urgent bool, fn func(tx *wtx) error) error {
	if err := s.turn.acquire(ctx, urgent); err != nil {
		return fmt.Errorf("sqlite begin: %w", translate(err))
	}
	defer s.turn.release()
	sqlTx, err := s.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("sqlite begin: %w", translate(err))
	}
	tx := &wtx{Tx: sqlTx, stmts: s.ws}
	defer func() {
		_ = tx.Rollback() // no-op after Commit
		for _, q := range tx.missed {
			s.ws.get(ctx, q) // the connection is free again and the turn still ours
		}
	}()
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("sqlite commit: %w", translate(err))
	}
	return nil
}

// newEvent is an event about to be appended.
type newEvent struct {
	typ     db.EventType
	node    string
	attempt int
	data    []byte // a JSON object; nil means {}
}

// appendEvent gives the event the run's next seq and inserts it. Incrementing runs.last_seq in the
// same transaction makes seq gap-free and unique without a read-then-write race.
func appendEvent(ctx context.Context, tx *wtx, runID string, e newEvent, at time.Time) (db.Event, error) {
	var seq int64
	err := tx.QueryRowContext(ctx, `UPDATE runs SET last_seq = last_seq + 1 WHERE id = ? RETURNING last_seq`, runID).Scan(&seq)
	if err != nil {
		return db.Event{}, fmt.Errorf("append %s to run %s: %w", e.typ, runID, translate(err))
	}
	data := e.data
	if data == nil {
		data = []byte("{}")
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO run_events (run_id, seq, type, node_id, attempt, data, at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		runID, seq, string(e.typ), e.node, e.attempt, string(data), micros(at))
	if err != nil {
		return db.Event{}, fmt.Errorf("append %s to run %s: %w", e.typ, runID, translate(err))
	}
	return db.Event{RunID: runID, Seq: seq, Type: e.typ, NodeID: e.node, Attempt: e.attempt, Data: data, At: at}, nil
}

// object marshals event data built by the store itself; those values always marshal.
func object(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("sqlite: marshal event data: %v", err))
	}
	return b
}

// cas is one compare-and-set transition: UPDATE runs SET <set> WHERE id = ? AND status IN (the
// transition's From) [AND lease_token = ?] [AND <where>] RETURNING the run.
type cas struct {
	op    db.Op
	runID string
	token string // the caller's lease token, for transitions that carry one
	set   string
	args  []any
	where string // extra condition, e.g. the pause kind
	wargs []any
}

// query builds the statement and its arguments from db.Transitions, so the SQL cannot drift from
// the state-machine table.
func (c cas) query() (string, []any) {
	tr := db.Transitions[c.op]
	args := append([]any{}, c.args...)
	args = append(args, c.runID)
	marks := make([]string, len(tr.From))
	for i, st := range tr.From {
		marks[i] = "?"
		args = append(args, string(st))
	}
	q := "UPDATE runs SET " + c.set + " WHERE id = ? AND status IN (" + strings.Join(marks, ", ") + ")"
	if tr.Lease {
		q += " AND lease_token = ? AND lease_token <> ''"
		args = append(args, c.token)
	}
	if c.where != "" {
		q += " AND (" + c.where + ")"
		args = append(args, c.wargs...)
	}
	return q + " RETURNING " + runColumns, args
}

// run executes the compare-and-set. When it matches no row it reports why: a replay of the
// caller's own committed lease write returns the run and replayed=true; anything else is a
// *db.TransitionError carrying the status found.
func (c cas) run(ctx context.Context, tx *wtx) (r db.Run, replayed bool, err error) {
	q, args := c.query()
	r, err = scanRun(tx.QueryRowContext(ctx, q, args...))
	if err == nil {
		return r, false, nil
	}
	if !isNotFound(err) {
		return db.Run{}, false, fmt.Errorf("%s run %s: %w", c.op, c.runID, err)
	}
	tr := db.Transitions[c.op]
	return refuse(ctx, tx, refusal{op: c.op, runID: c.runID, token: c.token, lease: tr.Lease, to: tr.To})
}

// refusal describes a write whose compare-and-set matched nothing.
type refusal struct {
	op    db.Op
	runID string
	token string
	lease bool      // the write carried token
	to    db.Status // the status the write moves to; "" when it is not a transition
}

// refuse explains a compare-and-set that matched nothing, reading the run in the same transaction.
// A lease write whose run already is where the write leads, under the same token, is the worker
// retrying a write that committed (its reply was lost): that is reported as replayed, not refused.
func refuse(ctx context.Context, tx *wtx, f refusal) (db.Run, bool, error) {
	r, err := getRun(ctx, tx, f.runID)
	if isNotFound(err) {
		return db.Run{}, false, &db.TransitionError{RunID: f.runID, Op: f.op, Lease: f.lease}
	}
	if err != nil {
		return db.Run{}, false, fmt.Errorf("%s run %s: %w", f.op, f.runID, err)
	}
	if f.lease && f.to != "" && r.Status == f.to && f.token != "" && r.LeaseToken == f.token {
		return r, true, nil
	}
	return db.Run{}, false, &db.TransitionError{RunID: f.runID, Op: f.op, Found: r.Status, Lease: f.lease}
}

// queryer is what both pools and transactions offer for reads.
type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func getRun(ctx context.Context, q queryer, runID string) (db.Run, error) {
	return scanRun(q.QueryRowContext(ctx, `SELECT `+runColumns+` FROM runs WHERE id = ?`, runID))
}
