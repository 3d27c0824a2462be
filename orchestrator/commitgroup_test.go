package orchestrator_test

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"threadflow/db"
	"threadflow/db/dbtest"
)

// A node's node_completed is committed together with the node_started of the nodes it lets start
// (commitGroup), and none of them runs before that commit. When the database refuses either record,
// node b never runs at all and the run pauses for recovery with the database's error, as when each
// record was committed on its own. The refusal is a real trigger in each engine.
func TestRefusedRecordRunsNothingAfterIt(t *testing.T) {
	t.Parallel()
	refuse := map[string]string{
		"sqlite": `CREATE TRIGGER refuse BEFORE INSERT ON run_events WHEN NEW.node_id = '%[1]s' AND NEW.type = '%[2]s'
			BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`,
		"postgres": `CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$;
			CREATE TRIGGER refuse BEFORE INSERT ON run_events FOR EACH ROW
			WHEN (NEW.node_id = '%[1]s' AND NEW.type = '%[2]s') EXECUTE FUNCTION refuse()`,
	}
	for _, refused := range []struct{ node, event string }{
		{"b", "node_started"},   // b's own start
		{"a", "node_completed"}, // a's completion, committed with b's start
	} {
		for _, engine := range []string{"sqlite", "postgres"} {
			t.Run(refused.node+"_"+refused.event+"/"+engine, func(t *testing.T) {
				t.Parallel()
				h := newHarness(t, func(t testing.TB, opts db.Options) db.Store {
					return openWithSQL(t, engine, opts, fmt.Sprintf(refuse[engine], refused.node, refused.event))
				})
				h.writeWorkflow("refused", `
name: refused
nodes:
  - id: a
    bash: "true"
  - id: b
    depends_on: [a]
    bash: echo $$ > pid
`)
				run := h.waitStatus(h.startRun("refused", "").ID, db.StatusPaused)
				if e := run.Meta.LastError; e == nil || !strings.Contains(e.Message, "refused by the test") {
					t.Fatalf("the run paused with %+v; want the database's refusal of %s %s", run.Meta.LastError, refused.node, refused.event)
				}
				if _, err := os.Stat(filepath.Join(run.WorkingPath, "pid")); err == nil {
					t.Error("node b ran although a record before it was refused")
				}
				for _, ev := range h.events(run.ID) {
					if ev.NodeID == "b" && ev.Type == db.EventNodeCompleted {
						t.Errorf("b's completion was recorded: %+v", ev)
					}
				}
			})
		}
	}
}

// openWithSQL opens a store of engine and runs stmts on its database after the migrations.
func openWithSQL(t testing.TB, engine string, opts db.Options, stmts string) db.Store {
	t.Helper()
	if engine == "sqlite" {
		path := filepath.Join(t.TempDir(), "threadflow.db")
		store := dbtest.SQLiteAt(t, path, opts)
		conn, err := sql.Open("sqlite", path)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close()
		if _, err := conn.Exec(stmts); err != nil {
			t.Fatal(err)
		}
		return store
	}
	url := dbtest.PostgresDatabase(t)
	store := dbtest.PostgresOn(t, url, opts)
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(t.Context())
	if _, err := conn.Exec(t.Context(), stmts); err != nil {
		t.Fatal(err)
	}
	return store
}
