package sqlite

import (
	"database/sql"
	"io/fs"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.uber.org/zap"

	"threadflow/db"
	"threadflow/db/storetest"
	"threadflow/migrations"
)

// TestFindLifecycleUsesIndex: finding a node's lifecycle event is an index lookup, not a scan of
// its run's history. Before, every node of a 1,000-node chain scanned all earlier events twice,
// and the per-node cost of `bot workflow run` grew with the chain's length.
func TestFindLifecycleUsesIndex(t *testing.T) {
	conn := planDB(t)
	if got := explain(t, conn, leaseForEventSQL, "node_started", "a", 1, "r1", "token"); !strings.Contains(got, "run_events_node_lifecycle") {
		t.Errorf("plan of the lifecycle lookup = %q, want a search of run_events_node_lifecycle", got)
	}
}

// TestRunListPlansUseIndexes: every list and lookup that must stay flat as runs accumulate
// (storetest.PlanCases: the run list, its counts, /workflow status of a conversation, retention,
// the rescuer and the gate timers) searches or walks an index, never the whole table (issue 34).
func TestRunListPlansUseIndexes(t *testing.T) {
	conn := planDB(t)
	for _, c := range storetest.PlanCases(dialect) {
		got := explain(t, conn, c.SQL, c.Args...)
		if fullScan.MatchString(got) || !strings.Contains(got, "INDEX") {
			t.Errorf("%s: plan %q, want index searches or walks only", c.Name, got)
		}
		for _, idx := range c.Indexes {
			if !slices.ContainsFunc(strings.Split(idx, "|"), func(name string) bool {
				return strings.Contains(got+";", "INDEX "+name+" ") || strings.Contains(got+";", "INDEX "+name+";")
			}) {
				t.Errorf("%s: plan %q, want a search of %s", c.Name, got, idx)
			}
		}
	}
}

// planDB opens a new store (its migrations applied) and returns a plain connection to its file.
func planDB(t *testing.T) *sql.DB {
	t.Helper()
	path := filepath.Join(t.TempDir(), "threadflow.db")
	s, err := Open(t.Context(), path, db.Options{}, zap.NewNop())
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	conn, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	return conn
}

// fullScan is a plan step that reads a whole table of runs' records.
var fullScan = regexp.MustCompile(`SCAN (runs|run_events|run_outbox|run_messages|transcript_messages|sessions)(;|$)`)

// explain is the EXPLAIN QUERY PLAN of query, its details joined with "; ".
func explain(t *testing.T, conn *sql.DB, query string, args ...any) string {
	t.Helper()
	rows, err := conn.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+query, args...)
	if err != nil {
		t.Fatalf("explain %s: %v", query, err)
	}
	defer func() { _ = rows.Close() }()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatalf("scan: %v", err)
		}
		plan = append(plan, detail)
	}
	return strings.Join(plan, "; ")
}

// TestLifecycleIndexWhereMatchesMigrations: the clause queries repeat is the index's own.
func TestLifecycleIndexWhereMatchesMigrations(t *testing.T) {
	for _, dir := range []struct {
		fsys fs.FS
		name string
	}{{migrations.SQLite, "sqlite"}, {migrations.Postgres, "postgres"}} {
		init, err := fs.ReadFile(dir.fsys, dir.name+"/00001_init.sql")
		if err != nil {
			t.Fatalf("read %s migration: %v", dir.name, err)
		}
		if !strings.Contains(string(init), "WHERE "+db.LifecycleIndexWhere) {
			t.Errorf("%s/00001_init.sql does not create the lifecycle index WHERE %s", dir.name, db.LifecycleIndexWhere)
		}
	}
	for _, typ := range []db.EventType{db.EventNodeStarted, db.EventNodeCompleted, db.EventNodeFailed, db.EventNodeSkipped, db.EventLoopIteration} {
		if !typ.Idempotent() || !strings.Contains(db.LifecycleIndexWhere, "'"+string(typ)+"'") {
			t.Errorf("%s: Idempotent() = %v, in LifecycleIndexWhere = %v; both must list it", typ, typ.Idempotent(), strings.Contains(db.LifecycleIndexWhere, "'"+string(typ)+"'"))
		}
	}
}
