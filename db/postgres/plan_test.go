package postgres_test

import (
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"

	"threadflow/db"
	"threadflow/db/dbtest"
	"threadflow/db/postgres"
)

// TestFindLifecycleUsesIndex: finding a node's lifecycle event is an index lookup even in a generic
// plan, which pgx's statement cache gets after five executions. Without the index's WHERE clause
// in the query, such a plan could only walk the run's whole history, once per node.
func TestFindLifecycleUsesIndex(t *testing.T) {
	url := dbtest.PostgresDatabase(t)
	s, err := postgres.Open(t.Context(), url, db.Options{}, zaptest.NewLogger(t))
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	conn := connect(t, url)
	for _, stmt := range []string{"SET plan_cache_mode = force_generic_plan", "SET enable_seqscan = off",
		"PREPARE find_lifecycle AS " + postgres.LeaseForEventSQL} {
		if _, err := conn.Exec(t.Context(), stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	rows, err := conn.Query(t.Context(), "EXPLAIN EXECUTE find_lifecycle('r1', 'token', 'node_started', 'a', 1)")
	if err != nil {
		t.Fatalf("explain: %v", err)
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
	if got := strings.Join(plan, "\n"); !strings.Contains(got, "run_events_lifecycle_idx") {
		t.Errorf("generic plan of the lifecycle lookup:\n%s\nwant a scan of run_events_lifecycle_idx", got)
	}
}
