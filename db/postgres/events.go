package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"threadflow/db"
)

// opRecord names RecordEvent in the TransitionError of a worker whose lease is gone.
const opRecord db.Op = "record event"

// appendEventSQL takes the run's next seq and inserts the event in one statement. Bumping
// runs.last_seq locks the run row, so concurrent appends to one run are serialized and seq stays
// gap-free; a rolled-back transaction gives its seq back.
const appendEventSQL = `WITH next AS (UPDATE runs SET last_seq = last_seq + 1 WHERE id = $1 RETURNING last_seq)
INSERT INTO run_events (run_id, seq, type, node_id, attempt, data, at)
SELECT $1, last_seq, $2, $3, $4, $5, $6 FROM next
RETURNING ` + eventColumns

// appendEvent appends e to its run's history and returns it with its seq.
func appendEvent(ctx context.Context, tx pgx.Tx, e db.Event) (db.Event, error) {
	data := e.Data
	if len(data) == 0 {
		data = json.RawMessage("{}")
	}
	return scanEvent(tx.QueryRow(ctx, appendEventSQL, e.RunID, string(e.Type), e.NodeID, e.Attempt, []byte(data), e.At))
}

// lockLeasedSQL holds the run's row for the rest of the transaction, but only while the caller's
// lease is the run's: the compare-and-set guard of every worker write that is not a transition.
const lockLeasedSQL = `SELECT id FROM runs WHERE id = $1 AND status = 'running' AND lease_token = $2 FOR UPDATE`

// findLifecycleSQL finds the recorded copy of an idempotent event and whether its data is the same
// JSON (jsonb equality ignores key order and spacing).
const findLifecycleSQL = `SELECT ` + eventColumns + `, data = $5::jsonb FROM run_events
WHERE run_id = $1 AND type = $2 AND node_id = $3 AND attempt = $4`

// RecordEvent appends e under the worker's lease. Node lifecycle events are idempotent: replaying one
// with the same data returns the stored event; with different data it is an ErrConflict. Recording
// node_completed resets the recovery counter, because the run made progress.
func (s *Store) RecordEvent(ctx context.Context, l db.Lease, e db.Event) (db.Event, error) {
	if e.Type == "" {
		return db.Event{}, fmt.Errorf("record event of run %s: the event has no type", l.RunID)
	}
	if len(e.Data) == 0 {
		e.Data = json.RawMessage("{}")
	}
	if !isObject(e.Data) {
		return db.Event{}, fmt.Errorf("record %s event of run %s: data must be a JSON object", e.Type, l.RunID)
	}
	e.RunID, e.At = l.RunID, s.now()
	var out db.Event
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		out, err = recordLeased(ctx, tx, l, e)
		return err
	})
	return out, err
}

// isObject reports whether data is one JSON object.
func isObject(data json.RawMessage) bool {
	var object map[string]json.RawMessage
	return json.Unmarshal(data, &object) == nil && object != nil
}

// recordLeased is RecordEvent's transaction.
func recordLeased(ctx context.Context, tx pgx.Tx, l db.Lease, e db.Event) (db.Event, error) {
	var id string
	err := tx.QueryRow(ctx, lockLeasedSQL, l.RunID, l.Token).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		_, _, err = db.Refuse(ctx, dtx{tx}, opRecord, l.RunID, l.Token, true)
		return db.Event{}, err
	}
	if err != nil {
		return db.Event{}, err
	}
	if e.Type.Idempotent() {
		stored, found, err := findLifecycle(ctx, tx, e)
		if found || err != nil {
			return stored, err
		}
	}
	out, err := appendEvent(ctx, tx, e)
	if err != nil {
		return db.Event{}, err
	}
	if e.Type == db.EventNodeCompleted {
		_, err = tx.Exec(ctx, `UPDATE runs SET recoveries = 0 WHERE id = $1`, l.RunID)
	}
	return out, err
}

// findLifecycle looks for an already recorded copy of the idempotent event e. The run's row is
// locked, so no concurrent append can slip in between this check and the insert.
func findLifecycle(ctx context.Context, tx pgx.Tx, e db.Event) (db.Event, bool, error) {
	var stored db.Event
	var data []byte
	var same bool
	err := tx.QueryRow(ctx, findLifecycleSQL, e.RunID, string(e.Type), e.NodeID, e.Attempt, []byte(e.Data)).
		Scan(&stored.RunID, &stored.Seq, &stored.Type, &stored.NodeID, &stored.Attempt, &data, &stored.At, &same)
	if errors.Is(err, pgx.ErrNoRows) {
		return db.Event{}, false, nil
	}
	if err != nil {
		return db.Event{}, false, err
	}
	if !same {
		return db.Event{}, true, fmt.Errorf("%s of node %s (attempt %d) in run %s is already recorded with other data: %w",
			e.Type, e.NodeID, e.Attempt, e.RunID, db.ErrConflict)
	}
	stored.Data, stored.At = data, stored.At.UTC()
	return stored, true, nil
}

// Events returns a run's events in sequence order; a run without events (or no such run) has none.
func (s *Store) Events(ctx context.Context, runID string) ([]db.Event, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+eventColumns+` FROM run_events WHERE run_id = $1 ORDER BY seq`, runID)
	if err != nil {
		return nil, translate(err)
	}
	evs, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (db.Event, error) { return scanEvent(row) })
	return evs, translate(err)
}
