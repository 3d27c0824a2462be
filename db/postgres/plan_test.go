package postgres_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/zap/zaptest"

	"threadflow/db"
	"threadflow/db/dbtest"
	"threadflow/db/postgres"
	"threadflow/db/storetest"
)

// TestFindLifecycleUsesIndex: finding a node's lifecycle event is an index lookup even in a generic
// plan, which pgx's statement cache gets after five executions. Without the index's WHERE clause
// in the query, such a plan could only walk the run's whole history, once per node.
func TestFindLifecycleUsesIndex(t *testing.T) {
	conn := planConn(t)
	for _, stmt := range []string{"SET plan_cache_mode = force_generic_plan", "SET enable_seqscan = off",
		"PREPARE find_lifecycle AS " + postgres.LeaseForEventSQL} {
		if _, err := conn.Exec(t.Context(), stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	if got := explain(t, conn, "EXPLAIN EXECUTE find_lifecycle('r1', 'token', 'node_started', 'a', 1)"); !strings.Contains(got, "run_events_lifecycle_idx") {
		t.Errorf("generic plan of the lifecycle lookup:\n%s\nwant a scan of run_events_lifecycle_idx", got)
	}
}

// TestRunListPlansUseIndexes: every list and lookup that must stay flat as runs accumulate
// (storetest.PlanCases: the run list, its counts, /workflow status of a conversation, retention,
// the rescuer and the gate timers) walks an index, in the generic plan pgx's statement cache
// gets, never the whole table (issue 34).
func TestRunListPlansUseIndexes(t *testing.T) {
	conn := planConn(t)
	// PostgreSQL plans from statistics: a history like a team's (mostly finished runs, some paused
	// at gates with timers, a few running) in place of an empty table, whose plans are ties.
	for _, stmt := range []string{
		`INSERT INTO conversations (id, platform, channel_id, thread_id, created_at)
		SELECT 'slack:C' || (i % 50) || ':T' || i, 'slack', 'C' || (i % 50), 'T' || i, now() FROM generate_series(1, 5000) i`,
		`INSERT INTO runs (id, workflow, conversation_id, parent_conversation_id, user_id, user_message, status, pause_kind,
			working_path, workflow_source, workflow_digest, created_at, queued_at, finished_at, lease_expires_at, gate_due_at, gate_remind_at)
		SELECT 'r' || i, 'w' || (i % 7), 'slack:C' || (i % 50) || ':T' || i, 'slack:C' || (i % 50), 'slack:U1', '',
			CASE WHEN i % 100 = 0 THEN 'running' WHEN i % 10 = 0 THEN 'paused' ELSE 'completed' END,
			CASE WHEN i % 10 = 0 AND i % 100 <> 0 THEN 'approval' ELSE '' END, '', ''::bytea, '',
			now() - i * interval '1 minute', now() - i * interval '1 minute',
			CASE WHEN i % 10 <> 0 THEN now() - i * interval '1 minute' + interval '10 seconds' END,
			CASE WHEN i % 100 = 0 THEN now() + interval '30 seconds' END,
			CASE WHEN i % 10 = 0 AND i % 100 <> 0 AND i % 30 = 0 THEN now() + interval '1 hour' END,
			CASE WHEN i % 10 = 0 AND i % 100 <> 0 AND i % 30 = 0 THEN now() + interval '30 minutes' END
		FROM generate_series(1, 5000) i`,
		"ANALYZE", "SET plan_cache_mode = force_generic_plan", "SET enable_seqscan = off"} {
		if _, err := conn.Exec(t.Context(), stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	for i, c := range storetest.PlanCases(postgres.Dialect) {
		got := explainGeneric(t, conn, fmt.Sprintf("case%d", i), db.Statement{SQL: c.SQL, Args: c.Args})
		if strings.Contains(got, "Seq Scan on") || !strings.Contains(got, "Index") {
			t.Errorf("%s: plan\n%s\nwant index scans only", c.Name, got)
		}
		for _, idx := range c.Indexes {
			if !slices.ContainsFunc(strings.Split(idx, "|"), func(name string) bool { return strings.Contains(got, " "+name+"_idx ") }) {
				t.Errorf("%s: plan\n%s\nwant a scan of %s (with _idx)", c.Name, got, idx)
			}
		}
	}
}

// planConn opens a new database (its migrations applied by the store) and returns a connection of
// its own to it, for session settings a plan depends on.
func planConn(t *testing.T) *pgx.Conn {
	t.Helper()
	url := dbtest.PostgresDatabase(t)
	s, err := postgres.Open(t.Context(), url, db.Options{}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return connect(t, url)
}

// explain runs an EXPLAIN statement and returns its plan's lines joined with newlines.
func explain(t *testing.T, conn *pgx.Conn, query string, args ...any) string {
	t.Helper()
	rows, err := conn.Query(t.Context(), query, args...)
	if err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var line string
		if err := rows.Scan(&line); err != nil {
			t.Fatalf("scan: %v", err)
		}
		plan = append(plan, line)
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return strings.Join(plan, "\n")
}

// TestRetentionPlanWalksTheOldestRuns: retention's batch finds the runs past it through an index in
// the generic plan even where a sequential scan looks cheap: the old runs are the last rows of
// the table (as after a restore, or runs imported in bulk), and the planner's guess that 50 of
// them come early in a scan is wrong. The bench's prune at 10,000 runs took 11 ms a batch in such
// a plan against 4 ms through the index, and grows with the table (issue 34).
func TestRetentionPlanWalksTheOldestRuns(t *testing.T) {
	conn := planConn(t)
	for _, stmt := range []string{
		`INSERT INTO conversations (id, platform, channel_id, created_at) VALUES ('slack:C1', 'slack', 'C1', now())`,
		`INSERT INTO runs (id, workflow, conversation_id, parent_conversation_id, user_id, user_message, status, working_path,
			workflow_source, workflow_digest, created_at, queued_at, finished_at)
		SELECT 'r' || i, 'w', 'slack:C1', 'slack:C1', 'slack:U1', '', CASE WHEN i % 2 = 0 THEN 'paused' ELSE 'completed' END, '', ''::bytea, '',
			now() - i * interval '1 second', now() - i * interval '1 second', CASE WHEN i % 2 = 1 THEN now() - i * interval '1 second' END
		FROM generate_series(1, 20000) i`,
		`INSERT INTO runs (id, workflow, conversation_id, parent_conversation_id, user_id, user_message, status, working_path,
			workflow_source, workflow_digest, created_at, queued_at, finished_at)
		SELECT 'old' || i, 'w', 'slack:C1', 'slack:C1', 'slack:U1', '', 'completed', '', ''::bytea, '',
			now() - interval '200 days' - i * interval '1 second', now() - interval '200 days', now() - interval '200 days'
		FROM generate_series(1, 1000) i`,
		"ANALYZE", "SET plan_cache_mode = force_generic_plan"} {
		if _, err := conn.Exec(t.Context(), stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	now := time.Now()
	sts := postgres.Dialect.PruneCandidates(db.DefaultRetention, now, db.MaxPruneBatch)
	sts = append(sts, postgres.Dialect.PruneBatch(db.DefaultRetention, now, db.MaxPruneBatch))
	for i, st := range sts {
		if got := explainGeneric(t, conn, fmt.Sprintf("prune%d", i), st); strings.Contains(got, "Seq Scan on runs") {
			t.Errorf("generic plan of\n%s\n%s\nwant the runs found through an index", st.SQL, got)
		}
	}
}

// explainGeneric is the generic plan of st, the one pgx's statement cache runs once PostgreSQL
// stops planning each execution afresh: EXPLAIN of the statement with its arguments bound would
// show a plan for those values instead.
func explainGeneric(t *testing.T, conn *pgx.Conn, name string, st db.Statement) string {
	t.Helper()
	if _, err := conn.Exec(t.Context(), "PREPARE "+name+" AS "+st.SQL); err != nil {
		t.Fatalf("prepare %s: %v", st.SQL, err)
	}
	lits := make([]string, len(st.Args))
	for i, a := range st.Args {
		switch v := a.(type) {
		case time.Time:
			lits[i] = "'" + v.UTC().Format(time.RFC3339Nano) + "'"
		case int:
			lits[i] = strconv.Itoa(v)
		case int64:
			lits[i] = strconv.FormatInt(v, 10)
		case string:
			lits[i] = quote(v)
		case []string:
			quoted := make([]string, len(v))
			for j, e := range v {
				quoted[j] = quote(e)
			}
			lits[i] = "ARRAY[" + strings.Join(quoted, ", ") + "]::text[]"
		default:
			t.Fatalf("explainGeneric: argument %d of type %T", i, a)
		}
	}
	args := ""
	if len(lits) > 0 {
		args = "(" + strings.Join(lits, ", ") + ")"
	}
	return explain(t, conn, "EXPLAIN EXECUTE "+name+args)
}

// quote is s as an SQL string literal.
func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
