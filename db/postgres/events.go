package postgres

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"

	"threadflow/db"
)

// appendEventSQL takes the run's next seq and inserts the event in one statement. Bumping
// runs.last_seq locks the run row, so concurrent appends to one run are serialized and seq stays
// gap-free; a rolled-back transaction gives its seq back.
const appendEventSQL = `WITH next AS (UPDATE runs SET last_seq = last_seq + 1 WHERE id = $1 RETURNING last_seq)
INSERT INTO run_events (run_id, seq, type, node_id, attempt, data, at)
SELECT $1, last_seq, $2, $3, $4, $5, $6 FROM next
RETURNING ` + db.EventColumns

// appendEvent appends e to its run's history and returns it with its seq.
func appendEvent(ctx context.Context, tx pgx.Tx, e db.Event) (db.Event, error) {
	return scanEvent(tx.QueryRow(ctx, appendEventSQL, eventArgs(e)...))
}

// eventArgs are appendEventSQL's arguments for e.
func eventArgs(e db.Event) []any {
	return []any{e.RunID, string(e.Type), e.NodeID, e.Attempt, []byte(sentData(e)), e.At}
}

// sentData is the data stored for e: an event without data has an empty object.
func sentData(e db.Event) json.RawMessage {
	if len(e.Data) == 0 {
		return json.RawMessage("{}")
	}
	return e.Data
}

// appendLeasedSQL appends an event in one statement, only while the lease is held and, for a
// lifecycle event, no copy of it is recorded (through run_events_lifecycle_idx, hence the repeated
// WHERE clause); node_completed resets the rescue counter with it.
var appendLeasedSQL = `WITH next AS (UPDATE runs SET last_seq = last_seq + 1, recoveries = CASE WHEN $7 THEN 0 ELSE recoveries END
	WHERE id = $1 AND ` + db.LeaseHeld("", "$8") + `
	AND NOT EXISTS (SELECT 1 FROM run_events WHERE run_id = $1 AND type = $2 AND node_id = $3 AND attempt = $4 AND ` + db.LifecycleIndexWhere + `)
	RETURNING last_seq)
INSERT INTO run_events (run_id, seq, type, node_id, attempt, data, at)
SELECT $1, last_seq, $2, $3, $4, $5, $6 FROM next
RETURNING ` + db.EventColumns

// leaseForEventSQL reads the run's lease, locking its row, and the recorded copy of a lifecycle
// event in one statement. The event is found through the partial index run_events_lifecycle_idx,
// which is why the join repeats the index's WHERE clause (runs has no column named type).
var leaseForEventSQL = `SELECT r.recoveries, e.seq, e.data, e.at FROM runs r
	LEFT JOIN run_events e ON e.run_id = r.id AND e.type = $3 AND e.node_id = $4 AND e.attempt = $5 AND ` + db.LifecycleIndexWhere + `
	WHERE r.id = $1 AND ` + db.LeaseHeld("r.", "$2") + `
	FOR UPDATE OF r`

// Events returns a run's events in sequence order; a run without events (or no such run) has none.
func (s *Store) Events(ctx context.Context, runID string) ([]db.Event, error) {
	q, args := dialect.Events(runID)
	return queryAll(ctx, s.pool, q, args, scanEvent)
}

// ActionEvents returns what people did to runs since a time, newest first (db.Store).
func (s *Store) ActionEvents(ctx context.Context, since time.Time, limit int) ([]db.Event, error) {
	q, args := dialect.ActionEvents(since, limit)
	return queryAll(ctx, s.pool, q, args, scanEvent)
}
