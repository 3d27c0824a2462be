package db

// Retention's SQL (Machine.Prune): which runs are past it, what a run owns and goes with it, what
// keeps a run past it, and how much each deletion frees. Rendered once here for both engines.

import (
	"strconv"
	"strings"
	"time"
)

// runOwned is everything a run owns besides its row: it is deleted with the run, and counted in
// what a prune frees. This is the one list: a table that records something of one run belongs
// here (the tables with a foreign key to runs would go by its ON DELETE CASCADE too, but are
// deleted and counted explicitly, so a prune says what it freed).
var runOwned = []struct {
	table string
	runID string // the column naming the run
	bytes string // the column whose Size is what a row holds
	// partial repeats the WHERE clause of the partial index on runID, which a query must state
	// for the planner to use the index (neither engine infers it from runID = ...).
	partial string
}{
	{"run_events", "run_id", "data", ""},
	{"run_outbox", "run_id", "reply", ""},
	{"run_messages", "run_id", "message_id", ""},
	{"transcript_messages", "run_id", "text", "run_id <> ''"}, // transcript_messages_run
	{"sessions", "run_id", "provider", "run_id <> ''"},        // sessions_run
	{"concurrency_holders", "run_id", "group_name", ""},
}

// runKept are the conditions that keep a run past its retention: each names something the run
// still holds. A run that owes its thread a message stays until the courier delivers it or gives
// up on it, so nothing is deleted under the courier.
var runKept = []string{
	"EXISTS (SELECT 1 FROM run_outbox o WHERE o.run_id = runs.id AND o.state = " + lit(OutboxOwed) + ")",
	// it holds its concurrency group: the runs waiting for the group wait for it to let go
	"EXISTS (SELECT 1 FROM concurrency_holders h WHERE h.run_id = runs.id AND h.holding)",
}

// retentionClass is one rule of Retention: runs in these statuses go once their last change
// (the expression changed) is older than the rule's duration.
type retentionClass struct {
	statuses []Status
	changed  string
	keep     func(Retention) time.Duration
}

// retentionClasses are the rules: finished runs are counted from their finish; failed and paused
// ones from their last change (a failed run's failure, a paused run's last heartbeat before it
// paused, or its queueing when it never ran).
var retentionClasses = []retentionClass{
	{[]Status{StatusCompleted, StatusCancelled}, "finished_at", func(r Retention) time.Duration { return r.Finished }},
	{[]Status{StatusFailed, StatusPaused}, "COALESCE(finished_at, heartbeat_at, queued_at)", func(r Retention) time.Duration { return r.Unfinished }},
}

// pastRetention is the condition that a run of class c changed last before cut and holds nothing
// it must keep. created_at < cut is implied by the last change and lets the status index
// (runs_status_created) bound the scan to runs created before the cut.
func pastRetention(q *SQL, c retentionClass, cut time.Time) string {
	conds := []string{statusIs("", c.statuses...), "created_at < " + q.Time(cut), c.changed + " < " + q.Time(cut)}
	for _, k := range runKept {
		conds = append(conds, "NOT "+k)
	}
	return allOf(conds...)
}

// takeOldest ends a query of retention's candidates: at most n of them, and where the engine runs
// generic plans (Dialect.ForceGenericPlan), the oldest first. The order is what makes such a plan walk
// the created_at index from the oldest run and stop after the batch: PostgreSQL's generic plan
// scanned the table instead, guessing that a batch's worth of old runs would turn up early in it,
// and where they are its last rows every batch read the whole table (4 ms a batch became 11 ms at
// 20,000 runs, growing with the history; TestRetentionPlanWalksTheOldestRuns). SQLite plans with
// the values, walks its status index and stops after n; an order would make it sort every run past
// retention first, for each batch.
func (d Dialect) takeOldest(q *SQL, n int) string {
	limit := " LIMIT " + q.Arg(n) + d.SkipLocked
	if d.ForceGenericPlan != "" {
		return " ORDER BY created_at" + limit
	}
	return limit
}

// PruneCandidates are the queries that select and take up to n runs past r at now, one per rule
// of r that is not off (SKIP LOCKED: two replicas pruning at once take different runs, and each
// run is deleted once).
func (d Dialect) PruneCandidates(r Retention, now time.Time, n int) []Statement {
	var out []Statement
	for _, c := range retentionClasses {
		if keep := c.keep(r); keep > 0 {
			q := d.Query()
			out = append(out, Statement{"SELECT id FROM runs WHERE " + pastRetention(q, c, now.Add(-keep)) + d.takeOldest(q, n), q.Args})
		}
	}
	return out
}

// PruneCount counts what deleting runs ids deletes (Machine.Prune's count of a batch).
func (d Dialect) PruneCount(ids []string) (string, []any) { return d.pruneCount(inRuns(ids)) }

// pruneCount counts the events of the runs that in selects and the bytes they hold: the runs' own
// (their frozen workflow source, output and messages) and those of everything they own
// (runOwned). in(q, col) is the condition that column col names one of the runs.
func (d Dialect) pruneCount(in func(q *SQL, col string) string) (string, []any) {
	q := d.Query()
	sql := "SELECT (SELECT COUNT(*) FROM run_events WHERE " + in(q, "run_id") + "), (SELECT COALESCE(SUM(" + d.Size("workflow_source") +
		" + " + d.Size("meta") + " + " + d.Size("user_message") + "), 0) FROM runs WHERE " + in(q, "id") + ")"
	for _, o := range runOwned {
		sql += " + (SELECT COALESCE(SUM(" + d.Size(o.bytes) + "), 0) FROM " + o.table + whereAll(in(q, o.runID), o.partial) + ")"
	}
	return sql, q.Args
}

// inRuns is pruneCount's condition for the runs ids.
func inRuns(ids []string) func(q *SQL, col string) string {
	return func(q *SQL, col string) string { return q.In(col, ids) }
}

// pastRetentionRuns is pruneCount's condition for every run of class c past cut, and their child
// runs at any depth (a dry run).
func pastRetentionRuns(c retentionClass, cut time.Time) func(q *SQL, col string) string {
	return func(q *SQL, col string) string {
		return col + " IN (" + withDescendants("SELECT id FROM runs WHERE "+pastRetention(q, c, cut)) + ")"
	}
}

// withDescendants selects the ids that picked selects and the ids of their child runs at any
// depth (runs_parent_idx): a run's children go with it. Their rows would go by the foreign key's
// cascade anyway, but then neither their files nor what they owned would be deleted and counted.
func withDescendants(picked string) string {
	return "WITH RECURSIVE pruned(id) AS (" + picked + " UNION SELECT r.id FROM runs r JOIN pruned ON r.parent_run_id = pruned.id) SELECT id FROM pruned"
}

// PruneDescendants selects the child runs, at any depth, of runs ids that ids does not hold.
func (d Dialect) PruneDescendants(ids []string) Statement {
	q := d.Query()
	return Statement{"SELECT id FROM (" + withDescendants("SELECT id FROM runs WHERE "+q.In("parent_run_id", ids)) + ") c WHERE NOT " +
		q.In("id", ids), q.Args}
}

// PruneBatch is one prune batch in one statement, where the engine's WITH may delete
// (DeletingCTEs): it takes up to n runs past r at now that no other transaction holds (SKIP
// LOCKED), adds their child runs, deletes everything they own and them, and returns one row: the
// ids of the runs it deleted (space-separated), the events deleted with them and the bytes freed,
// counted as pruneCount counts them (a dry run says the same). Empty when every rule of r is off.
func (d Dialect) PruneBatch(r Retention, now time.Time, n int) Statement {
	q := d.Query()
	var ctes, takes []string
	for i, c := range retentionClasses {
		if keep := c.keep(r); keep > 0 {
			name := "take" + strconv.Itoa(i)
			ctes = append(ctes, name+" AS (SELECT id FROM runs WHERE "+pastRetention(q, c, now.Add(-keep))+d.takeOldest(q, n)+")")
			takes = append(takes, "SELECT id FROM "+name)
		}
	}
	if len(takes) == 0 {
		return Statement{} // every rule is off
	}
	// a later rule's rows beyond n stay locked until the commit and wait for the next batch
	ctes = append(ctes, "picked AS ("+strings.Join(takes, " UNION ALL ")+" LIMIT "+q.Arg(n)+")",
		"pruned(id) AS (SELECT id FROM picked UNION SELECT r.id FROM runs r JOIN pruned ON r.parent_run_id = pruned.id)")
	in := func(col string) string { return col + " IN (SELECT id FROM pruned)" }
	bytes := []string{"(SELECT COALESCE(SUM(b), 0) FROM gone_runs)"}
	for i, o := range runOwned {
		name := "gone" + strconv.Itoa(i)
		ctes = append(ctes, name+" AS (DELETE FROM "+o.table+whereAll(in(o.runID), o.partial)+" RETURNING "+d.Size(o.bytes)+" AS b)")
		bytes = append(bytes, "(SELECT COALESCE(SUM(b), 0) FROM "+name+")")
	}
	ctes = append(ctes, "gone_runs AS (DELETE FROM runs WHERE "+in("id")+" RETURNING id, "+d.Size("workflow_source")+" + "+d.Size("meta")+" + "+
		d.Size("user_message")+" AS b)")
	// gone0 is run_events (runOwned's first)
	return Statement{"WITH RECURSIVE " + strings.Join(ctes, ", ") + " SELECT COALESCE((SELECT string_agg(id, ' ') FROM gone_runs), ''), " +
		"(SELECT COUNT(*) FROM gone0), " + strings.Join(bytes, " + "), q.Args}
}

// PruneDeletes are the statements that delete runs ids with everything they own, owned rows
// first.
func (d Dialect) PruneDeletes(ids []string) []Statement {
	var out []Statement
	for _, o := range runOwned {
		q := d.Query()
		out = append(out, Statement{"DELETE FROM " + o.table + whereAll(q.In(o.runID, ids), o.partial), q.Args})
	}
	q := d.Query()
	return append(out, Statement{"DELETE FROM runs WHERE " + q.In("id", ids), q.Args})
}

// Statement is one rendered SQL statement and its parameters.
type Statement struct {
	SQL  string
	Args []any
}
