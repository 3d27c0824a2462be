package db

// The compare-and-set on a run, rendered once for every engine: its guard and SET list as
// RunUpdate and RunSet document them, and the lease check every write under a lease makes.

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// statusIs is the condition that the run's status (prefix "" or "r.") is one of ss, written with
// literals: a planner sees them, and the text is one per call site.
func statusIs(prefix string, ss ...Status) string {
	if len(ss) == 1 {
		return prefix + "status = " + lit(ss[0])
	}
	return prefix + "status IN (" + lits(ss...) + ")"
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
	conds := []string{"id = " + q.Arg(u.RunID), q.In("status", strs(u.From))}
	if u.Leased {
		conds = append(conds, tokenIs("", q.Arg(u.Token)))
	}
	if len(u.IfPaused) > 0 {
		conds = append(conds, "(status <> "+lit(StatusPaused)+" OR "+q.In("pause_kind", strs(u.IfPaused))+")")
	}
	if u.PauseNode != "" {
		conds = append(conds, "pause_node = "+q.Arg(u.PauseNode))
	}
	if !u.ExpiredBefore.IsZero() {
		conds = append(conds, "lease_expires_at < "+q.Time(u.ExpiredBefore)+" AND recoveries = "+q.Arg(u.Recoveries))
	}
	return allOf(conds...)
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
		escalate := p.EscalateAt
		if p.Escalated {
			escalate = time.Time{}
		}
		add("pause_kind = " + q.Arg(string(p.Kind)) + ", pause_node = " + q.Arg(p.Node) +
			", gate_due_at = " + q.NullTime(p.DueAt) + ", gate_remind_at = " + q.NullTime(p.RemindAt) +
			", gate_escalate_at = " + q.NullTime(escalate))
	}
	if s.LeavePause {
		add("pause_kind = '', pause_node = '', gate_due_at = NULL, gate_remind_at = NULL, gate_escalate_at = NULL")
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
		add("meta = " + q.d.Meta(q, e))
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

// ResetRecoveries sets the run's rescue counter back to 0: it made progress (DriverTx.ResetRecoveries).
func (d Dialect) ResetRecoveries(runID string) (string, []any) {
	q := d.Query()
	return "UPDATE runs SET recoveries = 0 WHERE id = " + q.Arg(runID), q.Args
}
