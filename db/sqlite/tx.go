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

// nextSeq is the expression of the next seq of the run whose id is runID (an SQL expression): one
// past its latest event's, found through run_events' primary key. It is gap-free and unique
// because the single writer holds the database for the whole transaction.
func nextSeq(runID string) string {
	return "(SELECT COALESCE(MAX(seq), 0) + 1 FROM run_events WHERE run_id = " + runID + ")"
}

// appendEventSQL inserts an event at its run's next seq.
var appendEventSQL = `INSERT INTO run_events (run_id, seq, type, node_id, attempt, data, at) VALUES (?1, ` + nextSeq("?1") +
	`, ?2, ?3, ?4, ?5, ?6) RETURNING seq`

// appendEvent gives the event the run's next seq and inserts it.
func appendEvent(ctx context.Context, tx *wtx, runID string, e newEvent, at time.Time) (db.Event, error) {
	data := eventData(e.data)
	var seq int64
	err := tx.QueryRowContext(ctx, appendEventSQL, runID, string(e.typ), e.node, e.attempt, string(data), micros(at)).Scan(&seq)
	if err != nil {
		return db.Event{}, fmt.Errorf("append %s to run %s: %w", e.typ, runID, translate(err))
	}
	return db.Event{RunID: runID, Seq: seq, Type: e.typ, NodeID: e.node, Attempt: e.attempt, Data: data, At: at}, nil
}

// insertEvent inserts the event at seq (a new run's first event).
func insertEvent(ctx context.Context, tx *wtx, runID string, seq int64, e newEvent, at time.Time) (db.Event, error) {
	data := eventData(e.data)
	_, err := tx.ExecContext(ctx, `INSERT INTO run_events (run_id, seq, type, node_id, attempt, data, at) VALUES (?, ?, ?, ?, ?, ?, ?)`,
		runID, seq, string(e.typ), e.node, e.attempt, string(data), micros(at))
	if err != nil {
		return db.Event{}, fmt.Errorf("append %s to run %s: %w", e.typ, runID, translate(err))
	}
	return db.Event{RunID: runID, Seq: seq, Type: e.typ, NodeID: e.node, Attempt: e.attempt, Data: data, At: at}, nil
}

// eventData is an event's data as stored: nil means {}.
func eventData(data []byte) []byte {
	if data == nil {
		return []byte("{}")
	}
	return data
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
