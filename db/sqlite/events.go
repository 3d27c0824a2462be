package sqlite

import (
	"context"
	"encoding/json"
	"fmt"

	"threadflow/db"
)

// findLifecycleSQL finds the recorded copy of an idempotent event through the partial index
// run_events_node_lifecycle, which is why it repeats the index's WHERE clause.
const findLifecycleSQL = `SELECT ` + eventColumns + ` FROM run_events
	WHERE run_id = ? AND type = ? AND node_id = ? AND attempt = ? AND ` + db.LifecycleIndexWhere

func findLifecycle(ctx context.Context, tx *wtx, runID string, e db.Event) (db.Event, error) {
	return scanEvent(tx.QueryRowContext(ctx, findLifecycleSQL, runID, string(e.Type), e.NodeID, e.Attempt))
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
