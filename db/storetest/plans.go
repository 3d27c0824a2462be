package storetest

import (
	"time"

	"threadflow/db"
)

// PlanCase is a query whose plan must use indexes: each of Indexes (named as on SQLite; the
// PostgreSQL names add "_idx"; "a|b" takes either, where a planner with statistics may walk the
// list's order instead), or any index when Indexes is empty, never a scan of a whole table. The engines' TestRunListPlansUseIndexes run EXPLAIN (QUERY PLAN) on each.
type PlanCase struct {
	Name    string
	SQL     string
	Args    []any
	Indexes []string
}

// PlanCases are the lists and lookups that must stay bounded by what they return as runs
// accumulate (issue 34), rendered in d.
func PlanCases(d db.Dialect) []PlanCase {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	active := []db.Status{db.StatusQueued, db.StatusRunning, db.StatusPaused}
	var out []PlanCase
	add := func(name string, sql string, args []any, indexes ...string) {
		out = append(out, PlanCase{Name: name, SQL: sql, Args: args, Indexes: indexes})
	}
	q, a := d.ListRuns(db.RunFilter{Limit: 51})
	add("dashboard run list, bot workflow runs", q, a, "runs_created")
	q, a = d.ListRuns(db.RunFilter{Statuses: []db.Status{db.StatusCompleted}, Limit: 51})
	add("run list of one state", q, a, "runs_status_created|runs_created")
	q, a = d.ListRuns(db.RunFilter{InConversation: channelConv, Statuses: active, Limit: 50})
	add("/workflow status of a conversation", q, a, "runs_parent_conversation", "runs_conversation")
	each := map[db.Status]int{db.StatusQueued: 50, db.StatusRunning: 50, db.StatusPaused: 50, db.StatusFailed: 5, db.StatusCompleted: 5, db.StatusCancelled: 5}
	q, a = d.ListRuns(db.RunFilter{InConversation: channelConv, Each: each, WithoutSource: true})
	add("/workflow status's sections in one list", q, a, "runs_parent_conversation", "runs_conversation")
	q, a = d.CountRuns(db.RunFilter{InConversation: channelConv, Statuses: active, Limit: 200})
	add("/workflow status: how many active runs it left out", q, a, "runs_parent_conversation", "runs_conversation")
	ids0 := []string{"r1", "r2"}
	st := d.PruneDescendants(ids0)
	add("retention: the child runs of a batch", st.SQL, st.Args, "runs_parent_idx|runs_parent") // PostgreSQL's names are checked with _idx added
	q, a = d.CountRuns(db.RunFilter{Limit: 1000})
	add("dashboard counts per state", q, a, "runs_status_created|runs_rescue|runs_claim")
	q, a = d.CountRuns(db.RunFilter{InConversation: channelConv})
	add("counts per state of a conversation", q, a, "runs_parent_conversation", "runs_conversation")
	for _, st := range d.PruneCandidates(db.DefaultRetention, now, db.MaxPruneBatch) {
		add("retention's candidates", st.SQL, st.Args, "runs_status_created|runs_created")
	}
	if d.DeletingCTEs {
		st := d.PruneBatch(db.DefaultRetention, now, db.MaxPruneBatch)
		add("retention's batch in one statement", st.SQL, st.Args, "runs_status_created|runs_created", "runs_parent")
	}
	ids := []string{"r1", "r2"}
	q, a = d.PruneCount(ids)
	add("retention's count of a batch", q, a)
	for _, st := range d.PruneDeletes(ids) {
		add("retention's delete: "+st.SQL[:min(len(st.SQL), 32)], st.SQL, st.Args)
	}
	q, a = d.Expired(now)
	add("rescuer: expired leases", q, a, "runs_rescue")
	q, a = d.NextLeaseExpiry(now)
	add("rescuer: next lease expiry", q, a, "runs_rescue")
	q, a = d.DueGateTimers(db.Reach{}, now, db.MaxTimerBatch)
	add("gate timers due", q, a, "runs_gate_due", "runs_gate_remind") // and runs_gate_escalate, named without _idx on PostgreSQL
	q, a = d.NextGateTimer(db.Reach{}, now)
	add("next gate timer", q, a, "runs_gate_due", "runs_gate_remind")
	return out
}
