package db

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// This file is every condition the engines' SQL decides by, each written once: the engines render
// it with their Dialect and run it. Statuses, pause kinds and event types come from their Go
// constants and from Transitions, so the SQL cannot disagree with the state machine.

// RunColumns is the column list every run query selects or returns, in the engines' scanRun order.
const RunColumns = `id, workflow, conversation_id, parent_conversation_id, user_id, user_name, user_message, status,
	working_path, workflow_source, workflow_digest, meta, attempt, recoveries, lease_owner, lease_token,
	lease_expires_at, heartbeat_at, created_at, queued_at, started_at, finished_at, workspace_home, workspace_remote`

// EventColumns is the column list every event query selects or returns, in the engines' scanEvent
// order.
const EventColumns = `run_id, seq, type, node_id, attempt, data, at`

// statusIs is the condition that the run's status (prefix "" or "r.") is one of ss, written with
// literals: a planner sees them, and the text is one per call site.
func statusIs(prefix string, ss ...Status) string {
	if len(ss) == 1 {
		return prefix + "status = " + Lit(ss[0])
	}
	return prefix + "status IN (" + Lits(ss...) + ")"
}

// LeaseHeld is the condition that the run (its columns prefixed with prefix: "", "r." or "runs.")
// is running under the lease whose token is the SQL expression token (a parameter, or a column of
// the caller's list of leases): the check of every write under a lease.
func LeaseHeld(prefix, token string) string {
	return statusIs(prefix, StatusRunning) + " AND " + tokenIs(prefix, token)
}

// tokenIs is the lease token check: a dropped lease (empty token) matches no token.
func tokenIs(prefix, token string) string {
	return prefix + "lease_token = " + token + " AND " + prefix + "lease_token <> ''"
}

// UpdateRun renders the compare-and-set u as one UPDATE ... RETURNING the run.
func (d Dialect) UpdateRun(u RunUpdate) (string, []any) {
	q := d.Query()
	set, where := q.UpdateParts(u)
	return "UPDATE runs SET " + set + " WHERE " + where + " RETURNING " + RunColumns, q.Args
}

// UpdateParts renders u's SET list and its guard, as RunUpdate documents them.
func (q *SQL) UpdateParts(u RunUpdate) (set, where string) {
	return q.set(u.Set), q.guard(u)
}

func (q *SQL) guard(u RunUpdate) string {
	conds := []string{"id = " + q.Arg(u.RunID), q.In("status", Strings(u.From))}
	if u.Leased {
		conds = append(conds, tokenIs("", q.Arg(u.Token)))
	}
	if len(u.IfPaused) > 0 {
		conds = append(conds, "(status <> "+Lit(StatusPaused)+" OR "+q.In("pause_kind", Strings(u.IfPaused))+")")
	}
	if u.PauseNode != "" {
		conds = append(conds, "pause_node = "+q.Arg(u.PauseNode))
	}
	if !u.ExpiredBefore.IsZero() {
		conds = append(conds, "lease_expires_at < "+q.Time(u.ExpiredBefore)+" AND recoveries = "+q.Arg(u.Recoveries))
	}
	return And(conds...)
}

// set renders s as a SET list, each field as RunSet documents it.
func (q *SQL) set(s RunSet) string {
	var sets []string
	add := func(expr string) { sets = append(sets, expr) }
	if s.Status != "" {
		add("status = " + q.Arg(string(s.Status)))
	}
	q.setLease(s, add)
	if p := s.Pause; p != nil {
		add("pause_kind = " + q.Arg(string(p.Kind)) + ", pause_node = " + q.Arg(p.Node) +
			", gate_due_at = " + q.NullTime(p.DueAt) + ", gate_remind_at = " + q.NullTime(p.RemindAt))
	}
	if s.LeavePause {
		add("pause_kind = '', pause_node = '', gate_due_at = NULL, gate_remind_at = NULL")
	}
	if !s.QueuedAt.IsZero() {
		add("queued_at = " + q.Time(s.QueuedAt))
	}
	if !s.FinishedAt.IsZero() {
		add("finished_at = " + q.Time(s.FinishedAt))
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
		add("working_path = " + q.Arg(w.Path) + ", workspace_home = " + q.Arg(w.Home) + ", workspace_remote = " + q.Arg(w.Remote))
	}
	if s.ForgetWorkspace {
		add("workspace_home = '', workspace_remote = ''")
	}
	if e := metaEdit(s); !e.Empty() {
		add("meta = " + q.D.Meta(q, e))
	}
	return strings.Join(sets, ", ")
}

// setLease renders the lease columns of s.
func (q *SQL) setLease(s RunSet, add func(string)) {
	if s.Lease != nil {
		add("lease_owner = " + q.Arg(s.Lease.Owner) + ", lease_token = " + q.Arg(s.Lease.Token))
	}
	if !s.ExpiresAt.IsZero() {
		add("lease_expires_at = " + q.Time(s.ExpiresAt))
	}
	if !s.HeartbeatAt.IsZero() {
		add("heartbeat_at = " + q.Time(s.HeartbeatAt))
	}
	if !s.StartedAt.IsZero() {
		add("started_at = COALESCE(started_at, " + q.Time(s.StartedAt) + ")")
	}
	switch {
	case s.DropLease:
		add("lease_owner = '', lease_token = '', lease_expires_at = NULL")
	case s.EndLease:
		add("lease_expires_at = NULL")
	}
}

// metaEdit is what s changes in runs.meta: leaving a pause drops meta.pause, Meta's non-empty
// top-level fields replace the stored ones, and ResumedFrom records the status before the update.
func metaEdit(s RunSet) MetaEdit {
	var e MetaEdit
	if s.LeavePause {
		e.Remove = []string{"pause"}
	}
	if err := json.Unmarshal(MustJSON(s.Meta), &e.Patch); err != nil {
		panic(fmt.Sprintf("db: run meta is not a JSON object: %v", err)) // Meta is a struct: a programming error
	}
	if s.ResumedFrom {
		e.FromColumn = [][2]string{{"resumed_from", "status"}}
	}
	return e
}

// Reachable is the condition that keeps the runs a process with reach r executes and reports (see
// Reach) at now: runs of its platforms, of its conversations, and of its unattended platforms
// whose conversation no live terminal is attached to. The zero Reach keeps every run.
func (q *SQL) Reachable(r Reach, now time.Time) string {
	var conds []string
	if len(r.Platforms) > 0 {
		conds = append(conds, q.In(q.D.Platform, r.Platforms))
	}
	if len(r.Conversations) > 0 {
		conds = append(conds, q.In("runs.conversation_id", r.Conversations))
	}
	if len(r.Unattended) > 0 {
		conds = append(conds, "("+q.In(q.D.Platform, r.Unattended)+` AND NOT EXISTS (SELECT 1 FROM terminal_attachments a
			WHERE a.conversation_id = runs.conversation_id AND a.expires_at > `+q.Time(now)+"))")
	}
	return Or(conds...)
}

// workspaceReachable is the condition that keeps the queued runs whose workspace r reaches at now
// (Reach.Home and Remote); an empty Home keeps every run.
func (q *SQL) workspaceReachable(r Reach, now time.Time) string {
	if r.Home == "" {
		return ""
	}
	return `(runs.workspace_home = '' OR runs.workspace_home = ` + q.Arg(r.Home) + `
		OR (runs.workspace_remote <> '' AND runs.workspace_remote = ` + q.Arg(r.Remote) + `)
		OR NOT EXISTS (SELECT 1 FROM workspace_homes h WHERE h.home_token = runs.workspace_home AND h.expires_at > ` + q.Time(now) + `))`
}

// NextQueued selects the ids of the n oldest runs a process with reach r may claim at now, taking
// their rows (DriverTx.NextQueued): who may execute a run.
func (d Dialect) NextQueued(r Reach, now time.Time, n int) (string, []any) {
	q := d.Query()
	where := Where(statusIs("", Transitions[OpClaim].From...), q.Reachable(r, now), q.workspaceReachable(r, now))
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
	return statusIs("", StatusPaused) + " AND pause_kind = " + Lit(PauseApproval)
}

// DueGateTimers selects the ids of at most n runs in reach with a gate timer due at now
// (Driver.DueGateTimers).
func (d Dialect) DueGateTimers(r Reach, now time.Time, n int) (string, []any) {
	q := d.Query()
	due := "(gate_due_at <= " + q.Time(now) + " OR gate_remind_at <= " + q.Time(now) + ")"
	return "SELECT id FROM runs" + Where(timerGate(), due, q.Reachable(r, now)) + " ORDER BY id LIMIT " + q.Arg(n), q.Args
}

// NextGateTimer selects when the next gate timer of a run in reach is due (Store.NextGateTimer);
// NULL when none is set. Each MIN is one step of its partial index (runs_gate_due,
// runs_gate_remind).
func (d Dialect) NextGateTimer(r Reach, now time.Time) (string, []any) {
	q := d.Query()
	due := "SELECT MIN(gate_due_at) AS t FROM runs" + Where("gate_due_at IS NOT NULL", timerGate(), q.Reachable(r, now))
	remind := "SELECT MIN(gate_remind_at) AS t FROM runs" + Where("gate_remind_at IS NOT NULL", timerGate(), q.Reachable(r, now))
	return "SELECT MIN(t) FROM (" + due + " UNION ALL " + remind + ") AS timers", q.Args
}

// FindResumable selects the newest run of workflow in the parent conversation that a resume may
// leave (Transitions[OpResume]: failed or paused) (Store.FindResumable).
func (d Dialect) FindResumable(workflow, parentConversationID string) (string, []any) {
	q := d.Query()
	return "SELECT " + RunColumns + " FROM runs WHERE workflow = " + q.Arg(workflow) + " AND parent_conversation_id = " +
		q.Arg(parentConversationID) + " AND " + statusIs("", Transitions[OpResume].From...) +
		" ORDER BY created_at DESC, id DESC LIMIT 1", q.Args
}

// ListRuns selects the runs matching f, newest first (Store.ListRuns).
func (d Dialect) ListRuns(f RunFilter) (string, []any) {
	q := d.Query()
	var conds []string
	for _, c := range []struct{ col, val string }{
		{"workflow", f.Workflow}, {"conversation_id", f.ConversationID},
		{"parent_conversation_id", f.ParentConversationID}, {"user_id", f.UserID},
	} {
		if c.val != "" {
			conds = append(conds, c.col+" = "+q.Arg(c.val))
		}
	}
	if len(f.Statuses) > 0 {
		conds = append(conds, q.In("status", Strings(f.Statuses)))
	}
	return "SELECT " + RunColumns + " FROM runs" + Where(conds...) + " ORDER BY created_at DESC, id DESC LIMIT " +
		q.Arg(ListLimit(f.Limit)), q.Args
}

// FindRunsByPrefix selects the runs whose id starts with prefix, newest first; LIKE's
// metacharacters in prefix match only themselves (Store.FindRunsByPrefix).
func (d Dialect) FindRunsByPrefix(prefix string, limit int) (string, []any) {
	q := d.Query()
	pattern := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(prefix) + "%"
	return "SELECT " + RunColumns + ` FROM runs WHERE id LIKE ` + q.Arg(pattern) + ` ESCAPE '\'` +
		" ORDER BY created_at DESC, id DESC LIMIT " + q.Arg(ListLimit(limit)), q.Args
}

// LastAsk selects the node and seq of the run's latest gate_requested, of node unless node is ""
// (DriverTx.LastAsk).
func (d Dialect) LastAsk(runID, node string) (string, []any) {
	q := d.Query()
	conds := []string{"run_id = " + q.Arg(runID), "type = " + Lit(EventGateRequested)}
	if node != "" {
		conds = append(conds, "node_id = "+q.Arg(node))
	}
	return "SELECT node_id, seq FROM run_events" + Where(conds...) + " ORDER BY seq DESC LIMIT 1", q.Args
}

// GateEvents selects the node's approvals and resolutions after seq, in order (DriverTx.GateEvents):
// what JudgeGate counts.
func (d Dialect) GateEvents(runID, node string, after int64) (string, []any) {
	q := d.Query()
	return "SELECT " + EventColumns + " FROM run_events WHERE run_id = " + q.Arg(runID) + " AND node_id = " + q.Arg(node) +
		" AND seq > " + q.Arg(after) + " AND type IN (" + Lits(EventGateApproval, EventGateResolved) + ") ORDER BY seq", q.Args
}
