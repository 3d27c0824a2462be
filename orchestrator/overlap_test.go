package orchestrator_test

import (
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"threadflow/agent/agenttest"
	"threadflow/db"
	"threadflow/db/dbtest"
)

// A shell node's process starts while its node_started commits (startAttempt). When the database
// refuses that record, the process is killed at once and the run pauses for recovery with the
// database's error, as when the record failed before the process started. The refusal is a real
// trigger in each engine; node b would sleep two minutes if it were left running, and the harness
// waits far less for the pause.
func TestRefusedNodeStartStopsItsProcessAtOnce(t *testing.T) {
	t.Parallel()
	refuseB := map[string]string{
		"sqlite": `CREATE TRIGGER refuse_b BEFORE INSERT ON run_events WHEN NEW.node_id = 'b' AND NEW.type = 'node_started'
			BEGIN SELECT RAISE(ABORT, 'refused by the test'); END`,
		"postgres": `CREATE FUNCTION refuse_b() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$;
			CREATE TRIGGER refuse_b BEFORE INSERT ON run_events FOR EACH ROW
			WHEN (NEW.node_id = 'b' AND NEW.type = 'node_started') EXECUTE FUNCTION refuse_b()`,
	}
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			h := newHarness(t, func(t testing.TB, opts db.Options) db.Store {
				return openWithSQL(t, engine, opts, refuseB[engine])
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
				t.Fatalf("the run paused with %+v; want the database's refusal of node_started", run.Meta.LastError)
			}
			if pid := readPid(filepath.Join(run.WorkingPath, "pid")); pid > 0 && agenttest.Alive(pid) {
				t.Errorf("node b's process %d is still running after its node_started was refused", pid)
			}
			if _, err := os.Stat(filepath.Join(run.WorkingPath, "finished")); err == nil {
				t.Error("node b ran to its end although its node_started was refused")
			}
		})
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
