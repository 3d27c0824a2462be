package sqlite

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"

	"threadflow/db"
)

// opRecord names event writes in errors; recording an event is not a state transition.
const opRecord db.Op = "record event"

// RecordEvent appends e under a held lease. Node lifecycle types are keyed by (run, type, node,
// attempt): replaying one with the same data returns the stored event, with other data it is a
// conflict. node_completed is progress, so it resets the rescue counter.
func (s *Store) RecordEvent(ctx context.Context, l db.Lease, e db.Event) (db.Event, error) {
	data, err := eventData(e.Data)
	if err != nil {
		return db.Event{}, fmt.Errorf("record %s for run %s: %w", e.Type, l.RunID, err)
	}
	now := s.clock()
	var out db.Event
	err = s.write(ctx, func(tx *wtx) error {
		if err := holdsLease(ctx, tx, l); err != nil {
			return err
		}
		if e.Type.Idempotent() {
			stored, err := findLifecycle(ctx, tx, l.RunID, e)
			if err == nil {
				out, err = replay(stored, e, data)
				return err
			}
			if !isNotFound(err) {
				return err
			}
		}
		if e.Type == db.EventNodeCompleted {
			if _, err := tx.ExecContext(ctx, `UPDATE runs SET recoveries = 0 WHERE id = ?`, l.RunID); err != nil {
				return fmt.Errorf("record %s for run %s: %w", e.Type, l.RunID, translate(err))
			}
		}
		out, err = appendEvent(ctx, tx, l.RunID, newEvent{typ: e.Type, node: e.NodeID, attempt: e.Attempt, data: data}, now)
		return err
	})
	return out, err
}

// holdsLease checks the lease inside the write transaction; BEGIN IMMEDIATE holds the write lock,
// so the run cannot change between this check and the append.
func holdsLease(ctx context.Context, tx *wtx, l db.Lease) error {
	var one int
	err := tx.QueryRowContext(ctx, `SELECT 1 FROM runs WHERE id = ? AND status = 'running' AND lease_token = ? AND lease_token <> ''`,
		l.RunID, l.Token).Scan(&one)
	switch err = translate(err); {
	case err == nil:
		return nil
	case !isNotFound(err):
		return fmt.Errorf("record event for run %s: %w", l.RunID, err)
	}
	_, _, err = db.Refuse(ctx, dtx{tx}, opRecord, l.RunID, l.Token, true)
	return err
}

func findLifecycle(ctx context.Context, tx *wtx, runID string, e db.Event) (db.Event, error) {
	row := tx.QueryRowContext(ctx, `SELECT `+eventColumns+` FROM run_events
		WHERE run_id = ? AND type = ? AND node_id = ? AND attempt = ?`, runID, string(e.Type), e.NodeID, e.Attempt)
	return scanEvent(row)
}

// replay decides a repeated lifecycle write: the same data (compared as JSON values, so key order
// and spacing do not matter) is a no-op; other data contradicts history.
func replay(stored, e db.Event, data []byte) (db.Event, error) {
	var a, b any
	if json.Unmarshal(stored.Data, &a) == nil && json.Unmarshal(data, &b) == nil && reflect.DeepEqual(a, b) {
		return stored, nil
	}
	return db.Event{}, fmt.Errorf("record %s of node %q attempt %d for run %s: already recorded with other data: %w",
		e.Type, e.NodeID, e.Attempt, stored.RunID, db.ErrConflict)
}

// eventData validates event data as a JSON object and compacts it; nil is the empty object.
func eventData(raw json.RawMessage) ([]byte, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return []byte("{}"), nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, fmt.Errorf("event data must be a JSON object: %w", err)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, fmt.Errorf("event data must be a JSON object: %w", err)
	}
	return buf.Bytes(), nil
}

// Events returns a run's events in sequence order.
func (s *Store) Events(ctx context.Context, runID string) ([]db.Event, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+eventColumns+` FROM run_events WHERE run_id = ? ORDER BY seq`, runID)
	if err != nil {
		return nil, fmt.Errorf("events of run %s: %w", runID, translate(err))
	}
	defer rows.Close()
	var out []db.Event
	for rows.Next() {
		e, err := scanEvent(rows)
		if err != nil {
			return nil, fmt.Errorf("events of run %s: %w", runID, err)
		}
		out = append(out, e)
	}
	return out, translate(rows.Err())
}

const eventColumns = `run_id, seq, type, node_id, attempt, data, at`

func scanEvent(row scanner) (db.Event, error) {
	var (
		e    db.Event
		data string
		at   int64
	)
	if err := row.Scan(&e.RunID, &e.Seq, &e.Type, &e.NodeID, &e.Attempt, &data, &at); err != nil {
		return db.Event{}, translate(err)
	}
	e.Data, e.At = json.RawMessage(data), fromMicros(at)
	return e, nil
}
