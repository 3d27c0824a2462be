package orchestrator_test

import (
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"threadflow/agent/agenttest"
	"threadflow/db"
	"threadflow/db/dbtest"
)

// A shell node's process starts while its node_started commits, and its dependents start while its
// node_completed commits (startAttempt, recordLater). When the database refuses either record, the
// processes running are killed at once and the run pauses for recovery with the database's error,
// as when the record failed before anything else started. The refusal is a real trigger in each
// engine; node b would sleep two minutes if it were left running, and the harness waits far less
// for the pause.
func TestRefusedRecordStopsTheProcessesAtOnce(t *testing.T) {
	t.Parallel()
	refuse := map[string]string{
		"sqlite": `CREATE TRIGGER refuse BEFORE INSERT ON run_events WHEN NEW.node_id = '%[1]s' AND NEW.type = '%[2]s'
			BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`,
		"postgres": `CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$;
			CREATE TRIGGER refuse BEFORE INSERT ON run_events FOR EACH ROW
			WHEN (NEW.node_id = '%[1]s' AND NEW.type = '%[2]s') EXECUTE FUNCTION refuse()`,
	}
	for _, refused := range []struct{ node, event string }{
		{"b", "node_started"},   // b's own start: b's process is stopped
		{"a", "node_completed"}, // a's completion, committing while b starts: b's process is stopped
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
    bash: echo $$ > pid; sleep 120; touch finished
`)
				run := h.waitStatus(h.startRun("refused", "").ID, db.StatusPaused)
				if e := run.Meta.LastError; e == nil || !strings.Contains(e.Message, "refused by the test") {
					t.Fatalf("the run paused with %+v; want the database's refusal of %s %s", run.Meta.LastError, refused.node, refused.event)
				}
				if pid := readPid(filepath.Join(run.WorkingPath, "pid")); pid > 0 && agenttest.Alive(pid) {
					t.Errorf("node b's process %d is still running", pid)
				}
				if _, err := os.Stat(filepath.Join(run.WorkingPath, "finished")); err == nil {
					t.Error("node b ran to its end although a record it follows was refused")
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
