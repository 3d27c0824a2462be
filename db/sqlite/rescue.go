package sqlite

import (
	"context"
	"fmt"
	"time"

	"go.uber.org/zap"

	"threadflow/db"
)

// expired is a running run whose lease ran out, as the rescuer found it.
type expired struct {
	id, owner, token string
	recoveries       int
}

// RescueExpired re-queues running runs whose lease expired before now. Each one counts a recovery;
// a run past maxRecoveries rescues without progress fails instead, so a run that kills its worker
// every time cannot loop forever.
func (s *Store) RescueExpired(ctx context.Context, maxRecoveries int) ([]db.Rescue, error) {
	now := s.clock()
	var out []db.Rescue
	err := s.write(ctx, func(tx *wtx) error {
		found, err := findExpired(ctx, tx, now)
		if err != nil {
			return err
		}
		for _, x := range found {
			r, err := rescue(ctx, tx, x, maxRecoveries, now)
			if err != nil {
				return err
			}
			out = append(out, r)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, r := range out {
		s.log.Debug("sqlite.run_rescued", zap.String("run", r.Run.ID), zap.Int("recoveries", r.Run.Recoveries), zap.Bool("exhausted", r.Exhausted))
	}
	return out, nil
}

func findExpired(ctx context.Context, tx *wtx, now time.Time) ([]expired, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id, lease_owner, lease_token, recoveries FROM runs
		WHERE status = 'running' AND lease_expires_at < ? ORDER BY lease_expires_at, id`, micros(now))
	if err != nil {
		return nil, fmt.Errorf("rescue: %w", translate(err))
	}
	defer rows.Close()
	var out []expired
	for rows.Next() {
		var x expired
		if err := rows.Scan(&x.id, &x.owner, &x.token, &x.recoveries); err != nil {
			return nil, fmt.Errorf("rescue: %w", translate(err))
		}
		out = append(out, x)
	}
	return out, translate(rows.Err())
}

// rescue moves one expired run, guarded by the token, expiry and counter it was found with: if its
// worker heartbeated or finished meanwhile, the compare-and-set fails and the run is left alone.
func rescue(ctx context.Context, tx *wtx, x expired, maxRecoveries int, now time.Time) (db.Rescue, error) {
	c := cas{op: db.OpRescue, runID: x.id,
		set: `status = 'queued', recoveries = recoveries + 1, queued_at = ?,
			lease_owner = '', lease_token = '', lease_expires_at = NULL`,
		args:  []any{micros(now)},
		where: `lease_token = ? AND lease_expires_at < ? AND recoveries = ?`,
		wargs: []any{x.token, micros(now), x.recoveries}}
	ev := newEvent{typ: db.EventRunRescued, data: object(db.RunRescuedData{PrevOwner: x.owner, Recoveries: x.recoveries + 1})}
	exhausted := x.recoveries+1 > maxRecoveries
	if exhausted {
		reason := object(db.RecoveryBudgetExhausted(x.recoveries+1, maxRecoveries))
		c.set = `status = 'failed', recoveries = recoveries + 1, finished_at = ?,
			lease_owner = '', lease_token = '', lease_expires_at = NULL, meta = json_set(meta, '$.last_error', json(?))`
		c.args = []any{micros(now), string(reason)}
		ev = newEvent{typ: db.EventRunFailed, data: reason}
	}
	r, _, err := c.run(ctx, tx)
	if err != nil {
		return db.Rescue{}, err
	}
	if _, err := appendEvent(ctx, tx, r.ID, ev, now); err != nil {
		return db.Rescue{}, err
	}
	return db.Rescue{Run: r, PrevOwner: x.owner, Exhausted: exhausted}, nil
}
