package main

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"threadflow/db/dbtest"
	"threadflow/testkit"
	"threadflow/testkit/botproc"
)

// Two replicas starting at the same moment against one empty database race to migrate it; the
// migration lock must let both become ready rather than one failing on a half-created schema.
func TestProcessReplicasStartTogetherOnEmptyPostgres(t *testing.T) {
	dbURL := dbtest.PostgresDatabase(t) // skips without TEST_DATABASE_URL unless CI=true
	env := []string{"DATABASE_URL=" + dbURL, "HTTP_ADDR=127.0.0.1:0"}
	replicas := []*botproc.Process{
		launchIn(t, t.TempDir(), slices.Concat(env, []string{"REPLICA_ID=a"})...),
		launchIn(t, t.TempDir(), slices.Concat(env, []string{"REPLICA_ID=b"})...),
	}
	for _, p := range replicas {
		assertReady(t, serving(t, p))
	}
	for _, p := range replicas {
		stopClean(t, p, syscall.SIGTERM)
	}
}

// A database that answers but refuses writes (here made read-only, as a demoted primary or a full
// disk would) makes /readyz answer 503 saying so, and 200 again once it accepts writes.
func TestReadyzReportsADatabaseThatRefusesWrites(t *testing.T) {
	dbURL := dbtest.PostgresDatabase(t)
	b := runBot(t, map[string]string{"DATABASE_URL": dbURL, "HTTP_ADDR": "127.0.0.1:0", "THREADFLOW_HOME": t.TempDir(), "LOG_LEVEL": "error"})
	base := waitURL(t, b.stdout, b.done, b.stderr)
	assertReady(t, base)

	readOnly(t, dbURL, true)
	waitReadyz(t, base, http.StatusServiceUnavailable, "the database does not accept writes")
	// A person asking for a run meanwhile is told that retrying will not help, and where to look.
	c := runBot(t, map[string]string{"DATABASE_URL": dbURL, "THREADFLOW_HOME": t.TempDir(), "LOG_LEVEL": "error"}, "chat", "/workflow run hello")
	code := exitCode(c.result(t))
	if out := c.stdout.String() + c.stderr.String(); code == 0 || !strings.Contains(out, "cannot store anything right now") || !strings.Contains(out, "/readyz") {
		t.Errorf("bot chat against a read-only database exited %d and printed:\n%s", code, out)
	}
	readOnly(t, dbURL, false)
	waitReadyz(t, base, http.StatusOK, "ok")
}

// readOnly makes new sessions of the database read-only (or writable again) and ends the open
// ones, so the bot's pool reconnects under the new default.
func readOnly(t *testing.T, dbURL string, on bool) {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), dbURL)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	name := pgx.Identifier{conn.Config().Database}.Sanitize()
	stmt := "ALTER DATABASE " + name + " RESET default_transaction_read_only"
	if on {
		stmt = "ALTER DATABASE " + name + " SET default_transaction_read_only = on"
	}
	// This session may itself have started read-only.
	if _, err := conn.Exec(t.Context(), "SET default_transaction_read_only = off"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(t.Context(), stmt); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(t.Context(), `SELECT pg_terminate_backend(pid) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid()`); err != nil {
		t.Fatal(err)
	}
}

// waitReadyz polls /readyz until it answers status with a body containing want.
func waitReadyz(t *testing.T, base string, status int, want string) {
	t.Helper()
	deadline := time.Now().Add(testkit.Deadline)
	for {
		code, body := get(t, base+"readyz")
		if code == status && strings.Contains(body, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET /readyz = %d %q, want %d with %q", code, body, status, want)
		}
		time.Sleep(20 * time.Millisecond) // polling interval of a condition wait
	}
}
