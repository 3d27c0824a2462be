package sqlite

import (
	"context"
	"time"

	"threadflow/db"
)

// driver is the SQLite side of the transition core (db.Machine): it runs the SQL the core's
// decisions need and scans the rows. It decides nothing.
type driver struct{ s *Store }

func (d driver) InTx(ctx context.Context, fn func(tx db.DriverTx) error) error {
	return d.s.write(ctx, func(tx *wtx) error { return fn(dtx{tx}) })
}

// InControlTx goes ahead of the queued writers (writeUrgent): claims, rescues and lease renewals.
func (d driver) InControlTx(ctx context.Context, fn func(tx db.DriverTx) error) error {
	return d.s.writeUrgent(ctx, func(tx *wtx) error { return fn(dtx{tx}) })
}

func (d driver) AppendLeased(ctx context.Context, l db.Lease, e db.Event, reset bool) (db.Event, bool, error) {
	return appendLeased(ctx, d.s, l, e, reset)
}

func (d driver) AppendLeasedAll(ctx context.Context, l db.Lease, es []db.Event, resets []bool) ([]db.Event, []bool, error) {
	return appendLeasedAll(ctx, d.s, l, es, resets)
}

// RenewLeases is one UPDATE per lease in one write transaction: on the single writer connection a
// statement is a function call, and the commit is what costs. It goes ahead of the queued writers
// (InControlTx): behind a replica's own burst of writes (a thousand runs starting at once) a
// renewal came too late, the replica's leases expired under it and its rescuer took its own runs
// for crashed, until their recovery budget ran out and they failed (BENCHMARKS.md, recovery).
func (d driver) RenewLeases(ctx context.Context, ls []db.Lease, expires, now time.Time) (lost []db.Lease, err error) {
	err = d.InControlTx(ctx, func(tx db.DriverTx) error {
		lost, err = db.RenewEach(ctx, tx, ls, expires, now)
		return err
	})
	return lost, err
}

// InsertRuns writes the creations one statement after another in one write transaction: on the
// single writer connection a statement is a function call, and the commit is what costs.
func (d driver) InsertRuns(ctx context.Context, cs []db.RunCreation) ([]db.Run, error) {
	runs := make([]db.Run, len(cs))
	err := d.s.write(ctx, func(tx *wtx) error {
		for i, c := range cs {
			var err error
			if runs[i], err = insertRun(ctx, tx, c); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return nil, translate(err)
	}
	return runs, nil
}

// insertRun writes one creation.
func insertRun(ctx context.Context, tx *wtx, c db.RunCreation) (db.Run, error) {
	for _, v := range c.Conversations {
		if err := insertConversation(ctx, tx, v, c.At); err != nil {
			return db.Run{}, err
		}
	}
	q, args := dialect.InsertRun(c) // at seq 1, its first event's
	r, err := scanRun(tx.QueryRowContext(ctx, q, args...))
	if err != nil {
		return db.Run{}, err
	}
	e := c.Created
	if _, err := insertEvent(ctx, tx, e.RunID, 1, newEvent{typ: e.Type, node: e.NodeID, attempt: e.Attempt, data: e.Data}, e.At); err != nil {
		return db.Run{}, err
	}
	for _, ref := range c.Messages {
		if err := setMessageRef(ctx, tx, ref); err != nil {
			return db.Run{}, err
		}
	}
	if err := owe(ctx, tx, c.Run.ID, c.Owe, c.At); err != nil {
		return db.Run{}, err
	}
	return r, nil
}

func (d driver) DueGateTimers(ctx context.Context, reach db.Reach, now time.Time, n int) ([]string, error) {
	q, args := dialect.DueGateTimers(reach, now, n)
	rows, err := d.s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, translate(err)
	}
	return scanIDs(rows)
}

func (d driver) Dialect() db.Dialect { return dialect }

func (d driver) ReadRow(ctx context.Context, q string, args []any, dest ...any) error {
	return translate(d.s.r.QueryRowContext(ctx, q, args...).Scan(dest...))
}

func (d driver) ReadStrings(ctx context.Context, q string, args []any) ([]string, error) {
	rows, err := d.s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, translate(err)
	}
	return scanIDs(rows)
}

// dtx is one write transaction of the driver.
type dtx struct{ tx *wtx }

func (d dtx) UpdateRun(ctx context.Context, u db.RunUpdate) (db.Run, bool, error) {
	q, args := dialect.UpdateRun(u)
	r, err := scanRun(d.tx.QueryRowContext(ctx, q, args...))
	if isNotFound(err) {
		return db.Run{}, false, nil
	}
	return r, err == nil, err
}

// TransitAll runs the compare-and-sets one after another: on the single writer connection a
// statement is a function call.
func (d dtx) TransitAll(ctx context.Context, ts []db.Transit) ([]db.Run, []bool, error) {
	return db.TransitEach(ctx, d, ts)
}

func (d dtx) InsertRun(ctx context.Context, c db.RunCreation) (db.Run, error) {
	return insertRun(ctx, d.tx, c)
}

func (d dtx) Exec(ctx context.Context, q string, args []any) (int64, error) {
	res, err := d.tx.ExecContext(ctx, q, args...)
	if err != nil {
		return 0, translate(err)
	}
	n, err := res.RowsAffected()
	return n, translate(err)
}

func (d dtx) QueryStrings(ctx context.Context, q string, args []any, out *[]string) error {
	rows, err := d.tx.QueryContext(ctx, q, args...)
	if err != nil {
		return translate(err)
	}
	ids, err := scanIDs(rows)
	*out = append(*out, ids...)
	return err
}

func (d dtx) QueryRow(ctx context.Context, q string, args []any, dest ...any) error {
	return translate(d.tx.QueryRowContext(ctx, q, args...).Scan(dest...))
}

func (d dtx) LockRun(ctx context.Context, runID string) (db.Run, error) {
	return getRun(ctx, d.tx, runID) // the write transaction holds the database
}

func (d dtx) AppendEvent(ctx context.Context, e db.Event) (db.Event, error) {
	return appendEvent(ctx, d.tx, e.RunID, newEvent{typ: e.Type, node: e.NodeID, attempt: e.Attempt, data: e.Data}, e.At)
}

func (d dtx) NextQueued(ctx context.Context, reach db.Reach, now time.Time, n int) ([]string, error) {
	q, args := dialect.NextQueued(reach, now, n)
	rows, err := d.tx.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, translate(err)
	}
	return scanIDs(rows)
}

func (d dtx) Expired(ctx context.Context, now time.Time) ([]db.Expired, error) {
	q, args := dialect.Expired(now)
	return queryAll(ctx, d.tx, q, args, func(row scanner) (db.Expired, error) {
		var x db.Expired
		err := row.Scan(&x.RunID, &x.Owner, &x.Token, &x.Recoveries)
		return x, translate(err)
	})
}

func (d dtx) LastAsk(ctx context.Context, runID, node string) (string, int64, error) {
	var seq int64
	q, args := dialect.LastAsk(runID, node)
	err := translate(d.tx.QueryRowContext(ctx, q, args...).Scan(&node, &seq))
	if isNotFound(err) {
		return "", 0, nil
	}
	return node, seq, err
}

func (d dtx) OpenChildren(ctx context.Context, runID string) ([]string, error) {
	q, args := dialect.OpenChildren(runID)
	return queryAll(ctx, d.tx, q, args, func(row scanner) (string, error) {
		var id string
		return id, translate(row.Scan(&id))
	})
}

func (d dtx) GateEvents(ctx context.Context, runID, node string, after int64) ([]db.Event, error) {
	return gateEvents(ctx, d.tx, runID, node, after)
}

func (d dtx) EventAt(ctx context.Context, runID string, seq int64) (db.Event, error) {
	q, args := dialect.EventAt(runID, seq)
	return scanEvent(d.tx.QueryRowContext(ctx, q, args...))
}

func (d dtx) LeaseForEvent(ctx context.Context, l db.Lease, e db.Event) (db.EventLease, error) {
	return leaseForEvent(ctx, d.tx, l, e)
}

func (d dtx) ResetRecoveries(ctx context.Context, runID string) error {
	q, args := dialect.ResetRecoveries(runID)
	_, err := d.tx.ExecContext(ctx, q, args...)
	return translate(err)
}
