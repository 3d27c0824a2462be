package db

// Who may execute a run, and what is due: the claim, rescue and gate timer queries. Their
// statuses come from Transitions and the Go constants, so the SQL cannot disagree with the state
// machine.

import (
	"strings"
	"time"
)

// Reachable is the condition that keeps the runs a process with reach r executes and reports (see
// Reach) at now: runs of its platforms, of its conversations, and of its unattended platforms
// whose conversation no live terminal is attached to. The zero Reach keeps every run.
func (q *SQL) Reachable(r Reach, now time.Time) string {
	var conds []string
	if len(r.Platforms) > 0 {
		conds = append(conds, q.In(q.d.Platform, r.Platforms))
	}
	if len(r.Conversations) > 0 {
		conds = append(conds, q.In("runs.conversation_id", r.Conversations))
	}
	if len(r.Unattended) > 0 {
		conds = append(conds, "("+q.In(q.d.Platform, r.Unattended)+` AND NOT EXISTS (SELECT 1 FROM terminal_attachments a
			WHERE a.conversation_id = runs.conversation_id AND `+q.live("a.", now)+"))")
	}
	return anyOf(conds...)
}

// workspaceReachable is the condition that keeps the queued runs whose workspace r reaches at now
// (Reach.Home and Remote); an empty Home keeps every run.
func (q *SQL) workspaceReachable(r Reach, now time.Time) string {
	if r.Home == "" {
		return ""
	}
	return `(runs.workspace_home = '' OR runs.workspace_home = ` + q.Arg(r.Home) + `
		OR (runs.workspace_remote <> '' AND runs.workspace_remote = ` + q.Arg(r.Remote) + `)
		OR NOT EXISTS (SELECT 1 FROM workspace_homes h WHERE h.home_token = runs.workspace_home AND ` + q.live("h.", now) + `))`
}

// NextQueued selects the ids of the n oldest runs a process with reach r may claim at now, taking
// their rows (DriverTx.NextQueued): who may execute a run.
func (d Dialect) NextQueued(r Reach, now time.Time, n int) (string, []any) {
	q := d.Query()
	where := whereAll(statusIs("", Transitions[OpClaim].From...), q.Reachable(r, now), q.workspaceReachable(r, now), notWaiting())
	return "SELECT id FROM runs" + where + " ORDER BY queued_at, id LIMIT " + q.Arg(n) + d.SkipLocked, q.Args
}

// Expired selects the runs a rescue takes at now, oldest expiry first, taking their rows
// (DriverTx.Expired): running under a lease that expired before now.
func (d Dialect) Expired(now time.Time) (string, []any) {
	q := d.Query()
	return "SELECT id, lease_owner, lease_token, recoveries FROM runs WHERE " + statusIs("", Transitions[OpRescue].From...) +
		" AND lease_expires_at < " + q.Time(now) + " ORDER BY lease_expires_at, id" + d.SkipLocked, q.Args
}

// NextLeaseExpiry selects the earliest lease expiry at or after now of a run a rescue could take
// (Store.NextLeaseExpiry); NULL when there is none.
func (d Dialect) NextLeaseExpiry(now time.Time) (string, []any) {
	q := d.Query()
	return "SELECT MIN(lease_expires_at) FROM runs WHERE " + statusIs("", Transitions[OpRescue].From...) +
		" AND lease_expires_at >= " + q.Time(now), q.Args
}

// timerGate is the condition that keeps the runs whose gate timers fire (JudgeTimer): paused at
// an approval gate. Loop gates have no timers.
func timerGate() string {
	return statusIs("", StatusPaused) + " AND pause_kind = " + lit(PauseApproval)
}

// DueGateTimers selects the ids of at most n runs in reach with a gate timer due at now
// (Driver.DueGateTimers).
// One branch per timer, each a search of its own partial index (runs_gate_due, runs_gate_remind,
// runs_gate_escalate): with the three as one OR, SQLite's planner walked every paused run instead.
func (d Dialect) DueGateTimers(r Reach, now time.Time, n int) (string, []any) {
	q := d.Query()
	var branches []string
	for _, col := range []string{"gate_due_at", "gate_remind_at", "gate_escalate_at"} {
		branches = append(branches, "SELECT id FROM runs"+whereAll(timerGate(), col+" <= "+q.Time(now), q.Reachable(r, now)))
	}
	return strings.Join(branches, " UNION ") + " ORDER BY id LIMIT " + q.Arg(n), q.Args
}

// NextGateTimer selects when the next gate timer of a run in reach is due (Store.NextGateTimer);
// NULL when none is set. Each MIN is one step of its partial index (runs_gate_due,
// runs_gate_remind, runs_gate_escalate).
func (d Dialect) NextGateTimer(r Reach, now time.Time) (string, []any) {
	q := d.Query()
	due := "SELECT MIN(gate_due_at) AS t FROM runs" + whereAll("gate_due_at IS NOT NULL", timerGate(), q.Reachable(r, now))
	remind := "SELECT MIN(gate_remind_at) AS t FROM runs" + whereAll("gate_remind_at IS NOT NULL", timerGate(), q.Reachable(r, now))
	escalate := "SELECT MIN(gate_escalate_at) AS t FROM runs" + whereAll("gate_escalate_at IS NOT NULL", timerGate(), q.Reachable(r, now))
	return "SELECT MIN(t) FROM (" + due + " UNION ALL " + remind + " UNION ALL " + escalate + ") AS timers", q.Args
}

// LastAsk selects the node and seq of the run's latest gate_requested, of node unless node is ""
// (DriverTx.LastAsk).
func (d Dialect) LastAsk(runID, node string) (string, []any) {
	q := d.Query()
	conds := []string{"run_id = " + q.Arg(runID), "type = " + lit(EventGateRequested)}
	if node != "" {
		conds = append(conds, "node_id = "+q.Arg(node))
	}
	return "SELECT node_id, seq FROM run_events" + whereAll(conds...) + " ORDER BY seq DESC LIMIT 1", q.Args
}

// GateEvents selects the node's approvals and resolutions after seq, in order (DriverTx.GateEvents):
// what JudgeGate counts.
func (d Dialect) GateEvents(runID, node string, after int64) (string, []any) {
	q := d.Query()
	return "SELECT " + EventColumns + " FROM run_events WHERE run_id = " + q.Arg(runID) + " AND node_id = " + q.Arg(node) +
		" AND seq > " + q.Arg(after) + " AND type IN (" + lits(EventGateApproval, EventGateResolved) + ") ORDER BY seq", q.Args
}
