package sqlite

import (
	"database/sql"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"

	"threadflow/db"
	"threadflow/migrations"
)

// TestFindLifecycleUsesIndex: finding a node's lifecycle event is an index lookup, not a scan of
// its run's history. Before, every node of a 1,000-node chain scanned all earlier events twice,
// and the per-node cost of `bot workflow run` grew with the chain's length.
func TestFindLifecycleUsesIndex(t *testing.T) {
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
	rows, err := conn.QueryContext(t.Context(), "EXPLAIN QUERY PLAN "+leaseForEventSQL, "node_started", "a", 1, "r1", "token")
	if err != nil {
		t.Fatalf("explain: %v", err)
	}
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int
		var detail string
		if err := rows.Scan(&id, &parent, &unused, &detail); err != nil {
			t.Fatalf("scan: %v", err)
		}
		plan = append(plan, detail)
	}
	if got := strings.Join(plan, "; "); !strings.Contains(got, "run_events_node_lifecycle") {
		t.Errorf("plan of the lifecycle lookup = %q, want a search of run_events_node_lifecycle", got)
	}
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
