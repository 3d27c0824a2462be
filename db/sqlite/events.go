package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"threadflow/db"
)

// appendLeasedSQL inserts the event at the run's next seq (nextSeq) only while the lease is held
// and, for a lifecycle event, no copy of it is recorded (through run_events_node_lifecycle, hence
// the repeated WHERE clause). It reads the runs row but does not write it: the row holds the run's
// frozen workflow source, and SQLite rewrites a whole row on every update.
var appendLeasedSQL = `INSERT INTO run_events (run_id, seq, type, node_id, attempt, data, at)
	SELECT r.id, ` + nextSeq("r.id") + `, ?, ?, ?, ?, ? FROM runs r WHERE r.id = ? AND ` + db.LeaseHeld("r.", "?") + `
	AND NOT EXISTS (SELECT 1 FROM run_events WHERE run_id = r.id AND type = ? AND node_id = ? AND attempt = ? AND ` + db.LifecycleIndexWhere + `)
	RETURNING seq`

// resetRecoveriesSQL sets the run's rescue counter back to 0 when node_completed was appended; a
// counter at 0 already leaves the row unwritten.
const resetRecoveriesSQL = `UPDATE runs SET recoveries = 0 WHERE id = ? AND recoveries <> 0`

// appendLeased is Driver.AppendLeased: two statements in one write transaction.
func appendLeased(ctx context.Context, s *Store, l db.Lease, e db.Event, reset bool) (db.Event, bool, error) {
	outs, ok, err := appendLeasedAll(ctx, s, l, []db.Event{e}, []bool{reset})
	if err != nil {
		return db.Event{}, false, err
	}
	return outs[0], ok[0], nil
}

// appendLeasedAll is Driver.AppendLeasedAll: appendLeased's two statements per event, all in one
// write transaction.
func appendLeasedAll(ctx context.Context, s *Store, l db.Lease, es []db.Event, resets []bool) ([]db.Event, []bool, error) {
	outs, ok := make([]db.Event, len(es)), make([]bool, len(es))
	err := s.write(ctx, func(tx *wtx) error {
		for i, e := range es {
			var err error
			if outs[i], ok[i], err = appendLeasedIn(ctx, tx, l, e, resets[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	return outs, ok, nil
}

func appendLeasedIn(ctx context.Context, tx *wtx, l db.Lease, e db.Event, reset bool) (db.Event, bool, error) {
	data := eventData(e.Data)
	var seq int64
	err := translate(tx.QueryRowContext(ctx, appendLeasedSQL, string(e.Type), e.NodeID, e.Attempt, string(data), micros(e.At),
		l.RunID, l.Token, string(e.Type), e.NodeID, e.Attempt).Scan(&seq))
	if isNotFound(err) {
		return db.Event{}, false, nil
	}
	if err != nil {
		return db.Event{}, false, fmt.Errorf("append %s to run %s: %w", e.Type, l.RunID, err)
	}
	if reset {
		if _, err := tx.ExecContext(ctx, resetRecoveriesSQL, l.RunID); err != nil {
			return db.Event{}, false, fmt.Errorf("append %s to run %s: %w", e.Type, l.RunID, translate(err))
		}
	}
	return db.Event{RunID: l.RunID, Seq: seq, Type: e.Type, NodeID: e.NodeID, Attempt: e.Attempt, Data: data, At: e.At}, true, nil
}

// leaseForEventSQL reads the run's lease and the recorded copy of a lifecycle event in one
// statement. The event is found through the partial index run_events_node_lifecycle, which is why
// the join repeats the index's WHERE clause (runs has no column named type).
var leaseForEventSQL = `SELECT r.recoveries, e.seq, e.data, e.at FROM runs r
	LEFT JOIN run_events e ON e.run_id = r.id AND e.type = ? AND e.node_id = ? AND e.attempt = ? AND ` + db.LifecycleIndexWhere + `
	WHERE r.id = ? AND ` + db.LeaseHeld("r.", "?")

func leaseForEvent(ctx context.Context, tx *wtx, l db.Lease, e db.Event) (db.EventLease, error) {
	var (
		out  db.EventLease
		seq  sql.NullInt64
		data sql.NullString
		at   sql.NullInt64
	)
	err := translate(tx.QueryRowContext(ctx, leaseForEventSQL, string(e.Type), e.NodeID, e.Attempt, l.RunID, l.Token).
		Scan(&out.Recoveries, &seq, &data, &at)) // the write transaction holds the database
	if isNotFound(err) {
		return db.EventLease{}, nil
	}
	if err != nil {
		return db.EventLease{}, err
	}
	out.Held = true
	if seq.Valid {
		out.Found = true
		out.Stored = db.Event{RunID: l.RunID, Seq: seq.Int64, Type: e.Type, NodeID: e.NodeID, Attempt: e.Attempt,
			Data: json.RawMessage(data.String), At: fromMicros(at.Int64)}
	}
	return out, nil
}

// Events returns a run's events in sequence order.
func (s *Store) Events(ctx context.Context, runID string) ([]db.Event, error) {
	q, args := dialect.Events(runID)
	out, err := queryAll(ctx, s.r, q, args, scanEvent)
	if err != nil {
		return nil, fmt.Errorf("events of run %s: %w", runID, err)
	}
	return out, nil
}

// ActionEvents returns what people did to runs since a time, newest first (db.Store).
func (s *Store) ActionEvents(ctx context.Context, since time.Time, limit int) ([]db.Event, error) {
	q, args := dialect.ActionEvents(since, limit)
	out, err := queryAll(ctx, s.r, q, args, scanEvent)
	if err != nil {
		return nil, fmt.Errorf("action events: %w", err)
	}
	return out, nil
}

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
