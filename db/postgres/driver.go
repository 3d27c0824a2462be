package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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

// AppendLeasedAll sends appendLeasedSQL for every event in one batch: one round trip, run by the
// server as one implicit transaction, so one commit. A copy refused by the unique index aborts the
// whole batch; that is "nothing appended", and each event then finds out why on its own.
func (d driver) AppendLeasedAll(ctx context.Context, l db.Lease, es []db.Event, resets []bool) ([]db.Event, []bool, error) {
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
	b := &pgx.Batch{}
	runs := make([]db.Run, len(cs))
	for i, c := range cs {
		for _, v := range c.Conversations {
			b.Queue(insertConversationSQL, v.ID, v.Platform, v.ChannelID, v.ThreadID, v.ParentID, c.At)
		}
		n := c.Run
		b.Queue(insertRunSQL, n.ID, n.Workflow, n.ConversationID, n.ParentConversationID, n.UserID, n.UserName,
			n.UserMessage, n.WorkingPath, n.WorkflowSource, c.Digest, c.At).QueryRow(func(row pgx.Row) (err error) {
			runs[i], err = scanRun(row)
			return err
		})
		b.Queue(insertFirstEventSQL, eventArgs(c.Created)...)
		for _, ref := range c.Messages {
			q, args := messageRefSQL(ref)
			b.Queue(q, args...)
		}
		for _, o := range c.Owe {
			q, args := oweSQL(n.ID, o, c.At)
			b.Queue(q, args...)
		}
	}
	if err := d.s.pool.SendBatch(ctx, b).Close(); err != nil {
		return nil, translate(err)
	}
	return runs, nil
}

func (d driver) DueGateTimers(ctx context.Context, reach db.Reach, now time.Time) ([]string, error) {
	rows, err := d.s.pool.Query(ctx, `SELECT id FROM runs WHERE status = 'paused' AND pause_kind = 'approval'
		AND (gate_due_at <= $1 OR gate_remind_at <= $1) AND `+reachFilter(2)+` ORDER BY id LIMIT 100`, append([]any{now}, reachArgs(reach, now)...)...)
	if err != nil {
		return nil, translate(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	return ids, translate(err)
}

// dtx is one transaction of the driver. Its errors are translated when the transaction ends.
type dtx struct{ tx pgx.Tx }

func (d dtx) UpdateRun(ctx context.Context, u db.RunUpdate) (db.Run, bool, error) {
	q, args := updateSQL(u)
	r, err := scanRun(d.tx.QueryRow(ctx, q, args...))
	if errors.Is(err, pgx.ErrNoRows) {
		return db.Run{}, false, nil
	}
	return r, err == nil, err
}

// TransitAll sends one statement per compare-and-set, each appending its events only when its
// update matched (transitSQL), all in one batch: a claim of up to 256 runs or the rescue of a
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

func (d dtx) LockRun(ctx context.Context, runID string) (db.Run, error) {
	r, err := scanRun(d.tx.QueryRow(ctx, `SELECT `+runColumns+` FROM runs WHERE id = $1 FOR UPDATE`, runID))
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
	args := append(append(reachArgs(reach, now), workspaceArgs(reach, now)...), n)
	rows, err := d.tx.Query(ctx, `SELECT id FROM runs WHERE status = 'queued' AND `+reachFilter(1)+` AND `+workspaceFilter(5)+`
		ORDER BY queued_at, id LIMIT $`+fmt.Sprint(len(args))+` FOR UPDATE SKIP LOCKED`, args...)
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
		WHERE runs.id = l.id AND runs.lease_token = l.token AND runs.lease_token <> '' AND runs.status = 'running'
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
	rows, err := d.tx.Query(ctx, `SELECT id, lease_owner, lease_token, recoveries FROM runs
		WHERE status = 'running' AND lease_expires_at < $1 ORDER BY lease_expires_at, id FOR UPDATE SKIP LOCKED`, now)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (db.Expired, error) {
		var x db.Expired
		return x, row.Scan(&x.RunID, &x.Owner, &x.Token, &x.Recoveries)
	})
}

func (d dtx) LastAsk(ctx context.Context, runID, node string) (string, int64, error) {
	var seq int64
	err := d.tx.QueryRow(ctx, `SELECT node_id, seq FROM run_events WHERE run_id = $1 AND type = 'gate_requested'
		AND ($2 = '' OR node_id = $2) ORDER BY seq DESC LIMIT 1`, runID, node).Scan(&node, &seq)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", 0, nil
	}
	return node, seq, err
}

func (d dtx) GateEvents(ctx context.Context, runID, node string, after int64) ([]db.Event, error) {
	rows, err := d.tx.Query(ctx, `SELECT `+eventColumns+` FROM run_events
		WHERE run_id = $1 AND node_id = $2 AND seq > $3 AND type IN ('gate_approval', 'gate_resolved') ORDER BY seq`, runID, node, after)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (db.Event, error) { return scanEvent(row) })
}

func (d dtx) EventAt(ctx context.Context, runID string, seq int64) (db.Event, error) {
	e, err := scanEvent(d.tx.QueryRow(ctx, `SELECT `+eventColumns+` FROM run_events WHERE run_id = $1 AND seq = $2`, runID, seq))
	if errors.Is(err, pgx.ErrNoRows) {
		return db.Event{}, db.ErrNotFound
	}
	return e, err
}

func (d dtx) ClearReminder(ctx context.Context, runID string) error {
	_, err := d.tx.Exec(ctx, `UPDATE runs SET gate_remind_at = NULL WHERE id = $1`, runID)
	return err
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
	_, err := d.tx.Exec(ctx, `UPDATE runs SET recoveries = 0 WHERE id = $1`, runID)
	return err
}

// params numbers query parameters as they are added.
type params []any

func (p *params) add(v any) string {
	*p = append(*p, v)
	return fmt.Sprintf("$%d", len(*p))
}

// updateSQL renders a compare-and-set as one UPDATE ... RETURNING the run.
func updateSQL(u db.RunUpdate) (string, []any) {
	var p params
	set, where := updateParts(&p, u)
	return "UPDATE runs SET " + set + " WHERE " + where + " RETURNING " + runColumns, p
}

// transitSQL renders a compare-and-set and its events as one statement returning the run when the
// update matched, and nothing otherwise: the update takes the events' seqs from runs.last_seq, and
// the events are inserted from its result, so they exist only when it matched.
func transitSQL(t db.Transit) (string, []any) {
	k := len(t.Events)
	if k == 0 {
		return updateSQL(t.Update)
	}
	var p params
	set, where := updateParts(&p, t.Update)
	rows := make([]string, k)
	for i, e := range t.Events {
		a := eventArgs(e) // run id, type, node, attempt, data, at: the run id is the update's
		rows[i] = "(" + p.add(i+1) + "::bigint, " + p.add(a[1]) + "::text, " + p.add(a[2]) + "::text, " + p.add(a[3]) + "::int, " +
			p.add(a[4]) + "::jsonb, " + p.add(a[5]) + "::timestamptz)"
	}
	n := p.add(k)
	return "WITH u AS (UPDATE runs SET " + set + ", last_seq = last_seq + " + n + "::bigint WHERE " + where +
		" RETURNING " + runColumns + ", last_seq), e AS (INSERT INTO run_events (run_id, seq, type, node_id, attempt, data, at)" +
		" SELECT u.id, u.last_seq - " + n + "::bigint + v.i, v.type, v.node_id, v.attempt, v.data, v.at FROM u, (VALUES " +
		strings.Join(rows, ", ") + ") AS v(i, type, node_id, attempt, data, at)) SELECT " + runColumns + " FROM u", p
}

// updateParts renders u's SET list and WHERE condition, adding their parameters to p.
func updateParts(p *params, u db.RunUpdate) (set, where string) {
	set = setSQL(p, u.Set)
	conds := []string{"id = " + p.add(u.RunID), "status = ANY(" + p.add(statuses(u.From)) + ")"}
	if u.Leased {
		conds = append(conds, "lease_token = "+p.add(u.Token)+" AND lease_token <> ''")
	}
	if len(u.IfPaused) > 0 {
		kinds := make([]string, len(u.IfPaused))
		for i, k := range u.IfPaused {
			kinds[i] = string(k)
		}
		conds = append(conds, "(status <> 'paused' OR pause_kind = ANY("+p.add(kinds)+"))")
	}
	if u.PauseNode != "" {
		conds = append(conds, "pause_node = "+p.add(u.PauseNode))
	}
	if !u.ExpiredBefore.IsZero() {
		conds = append(conds, "lease_expires_at < "+p.add(u.ExpiredBefore)+" AND recoveries = "+p.add(u.Recoveries))
	}
	return set, strings.Join(conds, " AND ")
}

func statuses(ss []db.Status) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = string(s)
	}
	return out
}

// setSQL renders a RunSet as a SET list.
func setSQL(p *params, s db.RunSet) string {
	var sets []string
	add := func(expr string) { sets = append(sets, expr) }
	if s.Status != "" {
		add("status = " + p.add(string(s.Status)))
	}
	if s.Lease != nil {
		add("lease_owner = " + p.add(s.Lease.Owner) + ", lease_token = " + p.add(s.Lease.Token))
	}
	if !s.ExpiresAt.IsZero() {
		add("lease_expires_at = " + p.add(s.ExpiresAt))
	}
	if !s.HeartbeatAt.IsZero() {
		add("heartbeat_at = " + p.add(s.HeartbeatAt))
	}
	if !s.StartedAt.IsZero() {
		add("started_at = COALESCE(started_at, " + p.add(s.StartedAt) + "::timestamptz)")
	}
	switch {
	case s.DropLease:
		add("lease_owner = '', lease_token = '', lease_expires_at = NULL")
	case s.EndLease:
		add("lease_expires_at = NULL")
	}
	if ps := s.Pause; ps != nil {
		add("pause_kind = " + p.add(string(ps.Kind)) + ", pause_node = " + p.add(ps.Node) +
			", gate_due_at = " + p.add(nullTime(ps.DueAt)) + ", gate_remind_at = " + p.add(nullTime(ps.RemindAt)))
	}
	if s.LeavePause {
		add("pause_kind = '', pause_node = '', gate_due_at = NULL, gate_remind_at = NULL")
	}
	if !s.QueuedAt.IsZero() {
		add("queued_at = " + p.add(s.QueuedAt))
	}
	if !s.FinishedAt.IsZero() {
		add("finished_at = " + p.add(s.FinishedAt))
	}
	if s.Reopen {
		add("finished_at = NULL")
	}
	if s.NextAttempt {
		add("attempt = attempt + 1")
	}
	if s.Recovered {
		add("recoveries = recoveries + 1")
	}
	if w := s.Workspace; w != nil {
		add("working_path = " + p.add(w.Path) + ", workspace_home = " + p.add(w.Home) + ", workspace_remote = " + p.add(w.Remote))
	}
	if s.ForgetWorkspace {
		add("workspace_home = '', workspace_remote = ''")
	}
	if m := metaSQL(p, s); m != "meta" {
		add("meta = " + m)
	}
	return strings.Join(sets, ", ")
}

// metaSQL is the expression of the run's new meta: each top-level field of s.Meta replaces the
// stored one (jsonb || merges top-level keys).
func metaSQL(p *params, s db.RunSet) string {
	expr := "meta"
	if s.LeavePause {
		expr = "(meta - 'pause')"
	}
	if patch := mustJSON(s.Meta); string(patch) != "{}" {
		expr += " || " + p.add([]byte(patch)) + "::jsonb"
	}
	if s.ResumedFrom {
		expr += " || jsonb_build_object('resumed_from', status)"
	}
	return expr
}
