package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"threadflow/db"
)

// gateEvents are the approvals and resolutions of the node after its latest question.
func gateEvents(ctx context.Context, tx *wtx, runID, node string, after int64) ([]db.Event, error) {
	q, args := dialect.GateEvents(runID, node, after)
	out, err := queryAll(ctx, tx, q, args, scanEvent)
	if err != nil {
		return nil, fmt.Errorf("read gate %s of run %s: %w", node, runID, err)
	}
	return out, nil
}

// NextGateTimer returns when the next gate timer is due; ok is false when no gate has one.
func (s *Store) NextGateTimer(ctx context.Context, reach db.Reach) (time.Time, bool, error) {
	var next sql.NullInt64
	q, args := dialect.NextGateTimer(reach, s.clock())
	err := s.r.QueryRowContext(ctx, q, args...).Scan(&next)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("find next gate timer: %w", translate(err))
	}
	return fromNull(next), next.Valid, nil
}
