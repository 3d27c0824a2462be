package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"threadflow/db"
)

// driver is the PostgreSQL side of the transition core (db.Machine): it runs the SQL the core's
// decisions need and scans the rows. It decides nothing.
type driver struct{ s *Store }

func (d driver) InTx(ctx context.Context, fn func(tx db.DriverTx) error) error {
	return d.s.inTx(ctx, func(tx pgx.Tx) error { return fn(dtx{tx}) })
}

// InControlTx is InTx, on the main pool. Claims and rescues on connections of their own were
// tried: the first bot of the recovery bench then claimed 1,000 runs faster than it could start
// them, and starved of CPU, its own renewals came late and it lost leases by the hundred
// (BENCHMARKS.md, recovery). Renewals alone keep a connection of their own (openLeasePool).
func (d driver) InControlTx(ctx context.Context, fn func(tx db.DriverTx) error) error {
	return d.InTx(ctx, fn)
}

// AppendLeased is one statement outside any explicit transaction: one round trip and one commit.
// Two copies of a lifecycle event racing each other both pass NOT EXISTS (neither sees the other's
// row), and the unique index refuses the second: that is "not appended", and the caller's
// transaction then finds the first copy.
func (d driver) AppendLeased(ctx context.Context, l db.Lease, e db.Event, reset bool) (db.Event, bool, error) {
	out, err := scanEvent(d.s.pool.QueryRow(ctx, appendLeasedSQL, append(eventArgs(e), reset, l.Token)...))
	var pgErr *pgconn.PgError
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return db.Event{}, false, nil
	case errors.As(err, &pgErr) && pgErr.Code == codeUniqueViolation:
		return db.Event{}, false, nil
	case err != nil:
		return db.Event{}, false, translate(err)
	}
	return out, true, nil
}

// AppendLeasedAll appends every event with one statement (appendAllSQL): one round trip, one
// update of the run's row and one commit for a node's node_completed and its dependents'
// node_started, where a statement per event updated the row once per event. When that statement
// appends nothing (the lease is gone, or a copy of one of the events is recorded already) or a
// concurrent copy wins the unique index, appendEach finds out, event by event, which were appended.
func (d driver) AppendLeasedAll(ctx context.Context, l db.Lease, es []db.Event, resets []bool) ([]db.Event, []bool, error) {
	if len(es) < 2 {
		return d.appendEach(ctx, l, es, resets)
	}
	q, args := appendAllSQL(l, es, slices.Contains(resets, true))
	rows, err := d.s.pool.Query(ctx, q, args...)
	var seqs []int64
	if err == nil {
		seqs, err = pgx.CollectRows(rows, pgx.RowTo[int64])
	}
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == codeUniqueViolation, err == nil && len(seqs) != len(es):
		return d.appendEach(ctx, l, es, resets)
	case err != nil:
		return nil, nil, translate(err)
	}
	slices.Sort(seqs) // es took them in order
	outs, ok := make([]db.Event, len(es)), make([]bool, len(es))
	for i, e := range es {
		outs[i], ok[i] = appended(e, seqs[i]), true
	}
	return outs, ok, nil
}

// appended is e as recorded at seq. The statement returns seq alone: the rest is what was sent
// (the data as sent, not as jsonb formats it), as the SQLite driver returns it, and scanning every
// column back was a quarter of the bot's CPU for a node's record (BENCHMARKS.md, issue 34, fourth session).
func appended(e db.Event, seq int64) db.Event {
	e.Seq, e.At, e.Data = seq, e.At.Truncate(time.Microsecond).UTC(), sentData(e)
	return e
}

// appendAllSQL appends es to the run of l in one statement, only while l is held and no copy of
// any of them is recorded (each NOT EXISTS goes through run_events_lifecycle_idx, hence the
// repeated WHERE clause): the events take the seqs after the run's last_seq, in order, and
// node_completed among them (reset) sets the rescue counter back to 0.
func appendAllSQL(l db.Lease, es []db.Event, reset bool) (string, []any) {
	args := []any{l.RunID, l.Token, reset, len(es)}
	arg := func(v any) string {
		args = append(args, v)
		return "$" + strconv.Itoa(len(args))
	}
	var copies, values []string
	for i, e := range es {
		a := eventArgs(e)
		typ, node, attempt := arg(a[1]), arg(a[2]), arg(a[3])
		copies = append(copies, "AND NOT EXISTS (SELECT 1 FROM run_events WHERE run_id = $1 AND type = "+typ+" AND node_id = "+node+
			" AND attempt = "+attempt+" AND "+db.LifecycleIndexWhere+")")
		values = append(values, "("+strconv.Itoa(i+1)+", "+typ+"::text, "+node+"::text, "+attempt+"::int, "+arg(a[4])+"::jsonb, "+arg(a[5])+"::timestamptz)")
	}
	return `WITH next AS (UPDATE runs SET last_seq = last_seq + $4::int, recoveries = CASE WHEN $3::bool THEN 0 ELSE recoveries END
	WHERE id = $1 AND ` + db.LeaseHeld("", "$2") + " " + strings.Join(copies, " ") + ` RETURNING last_seq)
INSERT INTO run_events (run_id, seq, type, node_id, attempt, data, at)
SELECT $1, next.last_seq - $4::int + v.i, v.type, v.node_id, v.attempt, v.data, v.at FROM next,
	(VALUES ` + strings.Join(values, ", ") + `) AS v (i, type, node_id, attempt, data, at)
RETURNING seq`, args
}

// appendEach sends appendLeasedSQL for every event in one batch: one round trip, run by the server
// as one implicit transaction, so one commit. A copy refused by the unique index aborts the whole
// batch; that is "nothing appended", and each event then finds out why on its own.
func (d driver) appendEach(ctx context.Context, l db.Lease, es []db.Event, resets []bool) ([]db.Event, []bool, error) {
	b := &pgx.Batch{}
	for i, e := range es {
		b.Queue(appendLeasedSQL, append(eventArgs(e), resets[i], l.Token)...)
	}
	outs, ok := make([]db.Event, len(es)), make([]bool, len(es))
	results := d.s.pool.SendBatch(ctx, b)
	var err error
	for i := range es {
		if outs[i], err = scanEvent(results.QueryRow()); err != nil {
			if !errors.Is(err, pgx.ErrNoRows) {
				break
			}
			err = nil // appended nothing: the lease or a recorded copy says why
			continue
		}
		ok[i] = true
	}
	if cerr := results.Close(); err == nil {
		err = cerr
	}
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr) && pgErr.Code == codeUniqueViolation:
		return outs, make([]bool, len(es)), nil // rolled back: none appended
	case err != nil:
		return nil, nil, translate(err)
	}
	return outs, ok, nil
}

// InsertRuns sends every statement of every creation in one batch: one round trip, run by the
// server as one implicit transaction, so one commit for a burst of runs, where a transaction of
// statements sent one by one held a connection for a round trip each (BENCHMARKS.md, dispatch).
// A statement that fails aborts the whole batch: nothing is written.
func (d driver) InsertRuns(ctx context.Context, cs []db.RunCreation) ([]db.Run, error) {
	b, runs := creationBatch(cs)
	if err := d.s.pool.SendBatch(ctx, b).Close(); err != nil {
		return nil, translate(err)
	}
	return runs, nil
}

// creationBatch queues every statement of every creation; the runs are filled in as the batch
// runs.
func creationBatch(cs []db.RunCreation) (*pgx.Batch, []db.Run) {
	b := &pgx.Batch{}
	runs := make([]db.Run, len(cs))
	for i, c := range cs {
		queueCreation(b, c, &runs[i])
	}
	return b, runs
}

func (d driver) Dialect() db.Dialect { return dialect }

func (d driver) ReadRow(ctx context.Context, q string, args []any, dest ...any) error {
	err := d.s.pool.QueryRow(ctx, q, args...).Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return db.ErrNotFound
	}
	return translate(err)
}

func (d driver) ReadStrings(ctx context.Context, q string, args []any) ([]string, error) {
	rows, err := d.s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, translate(err)
	}
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return out, translate(err)
}

// queueCreation queues the statements of one creation, scanning its run into run.
func queueCreation(b *pgx.Batch, c db.RunCreation, run *db.Run) {
	for _, v := range c.Conversations {
		q, args := dialect.InsertConversation(v, c.At)
		b.Queue(q, args...)
	}
	q, args := dialect.InsertRun(c)
	b.Queue(q, args...).QueryRow(func(row pgx.Row) (err error) {
		*run, err = scanRun(row)
		return err
	})
	b.Queue(insertFirstEventSQL, eventArgs(c.Created)...)
	for _, ref := range c.Messages {
		q, args := dialect.SetMessageRef(ref)
		b.Queue(q, args...)
	}
	for _, o := range c.Owe {
		q, args := dialect.Owe(c.Run.ID, o, c.At)
		b.Queue(q, args...)
	}
}

func (d driver) DueGateTimers(ctx context.Context, reach db.Reach, now time.Time, n int) ([]string, error) {
	q, args := dialect.DueGateTimers(reach, now, n)
	rows, err := d.s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, translate(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return ids, translate(err)
}

// dtx is one transaction of the driver. Its errors are translated when the transaction ends.
type dtx struct{ tx pgx.Tx }

func (d dtx) UpdateRun(ctx context.Context, u db.RunUpdate) (db.Run, bool, error) {
	q, args := dialect.UpdateRun(u)
	r, err := scanRun(d.tx.QueryRow(ctx, q, args...))
	if errors.Is(err, pgx.ErrNoRows) {
		return db.Run{}, false, nil
	}
	return r, err == nil, err
}

// TransitAll sends one statement per compare-and-set, each appending its events only when its
// update matched (transitSQL), all in one batch: a claim of up to db.MaxClaimBatch runs or the rescue of a
// thousand is one round trip instead of two per run, which under load is what held the rescue's
// locks for seconds (BENCHMARKS.md, recovery).
func (d dtx) TransitAll(ctx context.Context, ts []db.Transit) ([]db.Run, []bool, error) {
	runs, ok := make([]db.Run, len(ts)), make([]bool, len(ts))
	b := &pgx.Batch{}
	for i, t := range ts {
		q, args := transitSQL(t)
		b.Queue(q, args...).QueryRow(func(row pgx.Row) error {
			r, err := scanRun(row)
			if errors.Is(err, pgx.ErrNoRows) {
				return nil
			}
			runs[i], ok[i] = r, err == nil
			return err
		})
	}
	if err := d.tx.SendBatch(ctx, b).Close(); err != nil {
		return nil, nil, err
	}
	return runs, ok, nil
}

// InsertRun sends the creation's statements in one batch inside the transaction.
func (d dtx) InsertRun(ctx context.Context, c db.RunCreation) (db.Run, error) {
	b, runs := creationBatch([]db.RunCreation{c})
	if err := d.tx.SendBatch(ctx, b).Close(); err != nil {
		return db.Run{}, err
	}
	return runs[0], nil
}

func (d dtx) Exec(ctx context.Context, q string, args []any) (int64, error) {
	tag, err := d.tx.Exec(ctx, q, args...)
	return tag.RowsAffected(), err
}

func (d dtx) QueryStrings(ctx context.Context, q string, args []any, out *[]string) error {
	rows, err := d.tx.Query(ctx, q, args...)
	if err != nil {
		return err
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	*out = append(*out, ids...)
	return err
}

func (d dtx) QueryRow(ctx context.Context, q string, args []any, dest ...any) error {
	err := d.tx.QueryRow(ctx, q, args...).Scan(dest...)
	if errors.Is(err, pgx.ErrNoRows) {
		return db.ErrNotFound
	}
	return err
}

func (d dtx) LockRun(ctx context.Context, runID string) (db.Run, error) {
	q, args := dialect.GetRun(runID)
	r, err := scanRun(d.tx.QueryRow(ctx, q+" FOR UPDATE", args...))
	if errors.Is(err, pgx.ErrNoRows) {
		return db.Run{}, db.ErrNotFound
	}
	return r, err
}

func (d dtx) AppendEvent(ctx context.Context, e db.Event) (db.Event, error) {
	return appendEvent(ctx, d.tx, e)
}

// NextQueued skips rows other claimers hold (SKIP LOCKED): concurrent claimers pass over a run
// another has locked instead of waiting for it and then finding it taken.
func (d dtx) NextQueued(ctx context.Context, reach db.Reach, now time.Time, n int) ([]string, error) {
	q, args := dialect.NextQueued(reach, now, n)
	rows, err := d.tx.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// RenewLeases is one statement: a round trip and a commit for every lease a replica holds, where
// a statement per lease would cost a round trip each to a server sharing the machine. It runs on
// the lease pool's own connection (openLeasePool).
func (d driver) RenewLeases(ctx context.Context, ls []db.Lease, expires, now time.Time) ([]db.Lease, error) {
	ids, tokens := make([]string, len(ls)), make([]string, len(ls))
	for i, l := range ls {
		ids[i], tokens[i] = l.RunID, l.Token
	}
	rows, err := d.s.leases.Query(ctx, `UPDATE runs SET lease_expires_at = $3, heartbeat_at = $4
		FROM unnest($1::text[], $2::text[]) AS l(id, token)
		WHERE runs.id = l.id AND `+db.LeaseHeld("runs.", "l.token")+`
		RETURNING runs.lease_token`, ids, tokens, expires, now)
	if err != nil {
		return nil, translate(err)
	}
	renewed, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, translate(err)
	}
	held := make(map[string]bool, len(renewed))
	for _, t := range renewed {
		held[t] = true
	}
	var lost []db.Lease
	for _, l := range ls {
		if !held[l.Token] {
			lost = append(lost, l)
		}
	}
	return lost, nil
}

// Expired locks the expired runs. SKIP LOCKED leaves runs alone that a worker is heartbeating right
// now, and lets rescuers on several replicas share the work.
func (d dtx) Expired(ctx context.Context, now time.Time) ([]db.Expired, error) {
	q, args := dialect.Expired(now)
	return queryAll(ctx, d.tx, q, args, func(row pgx.Row) (db.Expired, error) {
		var x db.Expired
		err := row.Scan(&x.RunID, &x.Owner, &x.Token, &x.Recoveries)
		return x, err
	})
}

func (d dtx) LastAsk(ctx context.Context, runID, node string) (string, int64, error) {
	var seq int64
	q, args := dialect.LastAsk(runID, node)
	err := d.tx.QueryRow(ctx, q, args...).Scan(&node, &seq)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", 0, nil
	}
	return node, seq, err
}

func (d dtx) OpenChildren(ctx context.Context, runID string) ([]string, error) {
	q, args := dialect.OpenChildren(runID)
	return queryAll(ctx, d.tx, q, args, func(row pgx.Row) (string, error) {
		var id string
		return id, row.Scan(&id)
	})
}

func (d dtx) GateEvents(ctx context.Context, runID, node string, after int64) ([]db.Event, error) {
	q, args := dialect.GateEvents(runID, node, after)
	return queryAll(ctx, d.tx, q, args, scanEvent)
}

func (d dtx) EventAt(ctx context.Context, runID string, seq int64) (db.Event, error) {
	q, args := dialect.EventAt(runID, seq)
	e, err := scanEvent(d.tx.QueryRow(ctx, q, args...))
	if errors.Is(err, pgx.ErrNoRows) {
		return db.Event{}, db.ErrNotFound
	}
	return e, err
}

// LeaseForEvent locks the run's row for the rest of the transaction, but only while the caller's
// lease is current, and reads the recorded copy of a lifecycle event with it: one round trip.
func (d dtx) LeaseForEvent(ctx context.Context, l db.Lease, e db.Event) (db.EventLease, error) {
	var (
		out  db.EventLease
		seq  *int64
		data []byte
		at   *time.Time
	)
	err := d.tx.QueryRow(ctx, leaseForEventSQL, l.RunID, l.Token, string(e.Type), e.NodeID, e.Attempt).Scan(&out.Recoveries, &seq, &data, &at)
	if errors.Is(err, pgx.ErrNoRows) {
		return db.EventLease{}, nil
	}
	if err != nil {
		return db.EventLease{}, err
	}
	out.Held = true
	if seq != nil && at != nil {
		out.Found = true
		out.Stored = db.Event{RunID: l.RunID, Seq: *seq, Type: e.Type, NodeID: e.NodeID, Attempt: e.Attempt, Data: json.RawMessage(data), At: at.UTC()}
	}
	return out, nil
}

func (d dtx) ResetRecoveries(ctx context.Context, runID string) error {
	q, args := dialect.ResetRecoveries(runID)
	_, err := d.tx.Exec(ctx, q, args...)
	return err
}

// transitSQL renders a compare-and-set and its events as one statement returning the run when the
// update matched, and nothing otherwise: the update takes the events' seqs from runs.last_seq, and
// the events are inserted from its result, so they exist only when it matched.
func transitSQL(t db.Transit) (string, []any) {
	k := len(t.Events)
	if k == 0 {
		return dialect.UpdateRun(t.Update)
	}
	q := dialect.Query()
	set, where := q.UpdateParts(t.Update)
	rows := make([]string, k)
	for i, e := range t.Events {
		a := eventArgs(e) // run id, type, node, attempt, data, at: the run id is the update's
		rows[i] = "(" + q.Arg(i+1) + "::bigint, " + q.Arg(a[1]) + "::text, " + q.Arg(a[2]) + "::text, " + q.Arg(a[3]) + "::int, " +
			q.Arg(a[4]) + "::jsonb, " + q.Arg(a[5]) + "::timestamptz)"
	}
	n := q.Arg(k)
	return "WITH u AS (UPDATE runs SET " + set + ", last_seq = last_seq + " + n + "::bigint WHERE " + where +
		" RETURNING " + db.RunColumns + ", last_seq), e AS (INSERT INTO run_events (run_id, seq, type, node_id, attempt, data, at)" +
		" SELECT u.id, u.last_seq - " + n + "::bigint + v.i, v.type, v.node_id, v.attempt, v.data, v.at FROM u, (VALUES " +
		strings.Join(rows, ", ") + ") AS v(i, type, node_id, attempt, data, at)) SELECT " + db.RunColumns + " FROM u", q.Args
}
