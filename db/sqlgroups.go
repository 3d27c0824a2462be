package db

// Concurrency groups as stored (table concurrency_holders): one holder per group, enforced by the
// partial unique index concurrency_holders_holding, and its waiters in seq order. Every replica
// takes, joins and hands over a group through these statements, in the transaction that creates
// or ends a run (groups.go decides when).

import "time"

// TakeGroup makes runID the holder of group unless the group has one: it inserts one row, or none
// when another run holds the group (ON CONFLICT on the partial unique index, which on PostgreSQL
// waits for a concurrent taker to commit or roll back first).
func (d Dialect) TakeGroup(group, runID string, now time.Time) (string, []any) {
	q := d.Query()
	return `INSERT INTO concurrency_holders (run_id, group_name, holding, seq, since) VALUES (` + q.Arg(runID) + ", " + q.Arg(group) +
		", TRUE, (SELECT COALESCE(MAX(seq), 0) + 1 FROM concurrency_holders), " + q.Time(now) +
		") ON CONFLICT (group_name) WHERE holding DO NOTHING", q.Args
}

// WaitGroup puts runID in line for group, after every run waiting already.
func (d Dialect) WaitGroup(group, runID string, now time.Time) (string, []any) {
	q := d.Query()
	return `INSERT INTO concurrency_holders (run_id, group_name, holding, seq, since) VALUES (` + q.Arg(runID) + ", " + q.Arg(group) +
		", FALSE, (SELECT COALESCE(MAX(seq), 0) + 1 FROM concurrency_holders), " + q.Time(now) + ")", q.Args
}

// GroupHolder selects the run holding group.
func (d Dialect) GroupHolder(group string) (string, []any) {
	q := d.Query()
	return "SELECT run_id FROM concurrency_holders WHERE group_name = " + q.Arg(group) + " AND holding", q.Args
}

// GroupPlace selects where runID stands: its group, whether it holds it, the holder, and its place
// in line (1 for the next; 0 when it holds the group).
func (d Dialect) GroupPlace(runID string) (string, []any) {
	q := d.Query()
	return `SELECT me.group_name, me.holding,
		COALESCE((SELECT h.run_id FROM concurrency_holders h WHERE h.group_name = me.group_name AND h.holding), ''),
		CASE WHEN me.holding THEN 0 ELSE (SELECT COUNT(*) FROM concurrency_holders w
			WHERE w.group_name = me.group_name AND NOT w.holding AND (w.seq < me.seq OR w.seq = me.seq AND w.run_id <= me.run_id)) END
		FROM concurrency_holders me WHERE me.run_id = ` + q.Arg(runID), q.Args
}

// GroupWaiters selects the runs waiting for group, in line order.
func (d Dialect) GroupWaiters(group string) (string, []any) {
	q := d.Query()
	return "SELECT run_id FROM concurrency_holders WHERE group_name = " + q.Arg(group) + " AND NOT holding ORDER BY seq, run_id", q.Args
}

// LeaveGroup deletes runID's place (held or waited for), returning its group and whether it held it.
func (d Dialect) LeaveGroup(runID string) (string, []any) {
	q := d.Query()
	return "DELETE FROM concurrency_holders WHERE run_id = " + q.Arg(runID) + " RETURNING group_name, holding", q.Args
}

// PromoteGroup hands group to its oldest waiter, if any.
func (d Dialect) PromoteGroup(group string) (string, []any) {
	q := d.Query()
	return `UPDATE concurrency_holders SET holding = TRUE WHERE run_id = (SELECT run_id FROM concurrency_holders
		WHERE group_name = ` + q.Arg(group) + " AND NOT holding ORDER BY seq, run_id LIMIT 1) RETURNING run_id", q.Args
}

// notWaiting is the condition that keeps the runs not waiting in line for a concurrency group: a
// queued run that waits is claimed only once the group is handed to it.
func notWaiting() string {
	return "NOT EXISTS (SELECT 1 FROM concurrency_holders g WHERE g.run_id = runs.id AND NOT g.holding)"
}
