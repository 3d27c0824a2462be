package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"threadflow/db"
)

// expiredSQL locks the running runs whose lease ran out. SKIP LOCKED leaves runs alone that a
// worker is heartbeating right now, and lets rescuers on several replicas share the work.
const expiredSQL = `SELECT id, lease_owner, lease_token, recoveries FROM runs
WHERE status = 'running' AND lease_expires_at < $1
ORDER BY lease_expires_at, id FOR UPDATE SKIP LOCKED`

// requeueSQL hands an expired run back to the queue, counting one recovery. It goes to the back of
// the queue: a run that keeps killing its worker must not starve the runs behind it.
const requeueSQL = `UPDATE runs SET status = 'queued', recoveries = recoveries + 1, queued_at = $4,
	lease_owner = '', lease_token = '', lease_expires_at = NULL
WHERE id = $1 AND status = ANY($2) AND lease_token = $3 RETURNING ` + runColumns

// exhaustSQL fails an expired run whose recovery budget is spent.
const exhaustSQL = `UPDATE runs SET status = 'failed', recoveries = recoveries + 1,
	lease_owner = '', lease_token = '', lease_expires_at = NULL, finished_at = $4, meta = meta || $5::jsonb
WHERE id = $1 AND status = ANY($2) AND lease_token = $3 RETURNING ` + runColumns

// expired is a run whose lease ran out, as found under lock.
type expired struct {
	id, owner, token string
	recoveries       int
}

// RescueExpired re-queues running runs whose lease expired, counting a recovery; a run that would
// exceed maxRecoveries rescues without progress moves to failed instead, so a run that crashes its
// worker every time cannot loop forever.
func (s *Store) RescueExpired(ctx context.Context, maxRecoveries int) ([]db.Rescue, error) {
	now := s.now()
	var out []db.Rescue
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		rows, err := tx.Query(ctx, expiredSQL, now)
		if err != nil {
			return err
		}
		found, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (expired, error) {
			var x expired
			return x, row.Scan(&x.id, &x.owner, &x.token, &x.recoveries)
		})
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
	return out, err
}

// rescue requeues or fails one locked expired run and records why.
func rescue(ctx context.Context, tx pgx.Tx, x expired, maxRecoveries int, now time.Time) (db.Rescue, error) {
	from := fromStatuses(db.OpRescue)
	if x.recoveries+1 > maxRecoveries {
		e := db.RecoveryBudgetExhausted(x.recoveries+1, maxRecoveries)
		r, err := scanRun(tx.QueryRow(ctx, exhaustSQL, x.id, from, x.token, now, []byte(mustJSON(db.Meta{LastError: &e}))))
		if err != nil {
			return db.Rescue{}, err
		}
		_, err = appendEvent(ctx, tx, event(r, db.EventRunFailed, "", now, e))
		return db.Rescue{Run: r, PrevOwner: x.owner, Exhausted: true}, err
	}
	r, err := scanRun(tx.QueryRow(ctx, requeueSQL, x.id, from, x.token, now))
	if err != nil {
		return db.Rescue{}, err
	}
	data := db.RunRescuedData{PrevOwner: x.owner, Recoveries: r.Recoveries}
	_, err = appendEvent(ctx, tx, event(r, db.EventRunRescued, "", now, data))
	return db.Rescue{Run: r, PrevOwner: x.owner}, err
}
