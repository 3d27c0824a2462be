package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
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
	return insertEvent(ctx, tx, runID, seq, e, at)
}

// insertEvent inserts the event at the seq its caller took from runs.last_seq.
func insertEvent(ctx context.Context, tx *wtx, runID string, seq int64, e newEvent, at time.Time) (db.Event, error) {
	data := e.data
	if data == nil {
		data = []byte("{}")
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO run_events (run_id, seq, type, node_id, attempt, data, at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
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

// queryer is what both pools and transactions offer for reads.
type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

func getRun(ctx context.Context, q queryer, runID string) (db.Run, error) {
	query, args := dialect.GetRun(runID)
	return scanRun(q.QueryRowContext(ctx, query, args...))
}
