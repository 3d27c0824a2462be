package dbtest

import (
	"context"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/zap/zaptest"

	"threadflow/db"
	"threadflow/db/postgres"
	"threadflow/testkit"
)

// PostgresURLEnv names the variable holding the server the PostgreSQL tests use, for example
// postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable. Its database is only used to create
// and drop the per-test databases.
const PostgresURLEnv = "TEST_DATABASE_URL"

// adminTimeout bounds creating and dropping a test database, so a wedged server fails the test
// instead of hanging it.
const adminTimeout = 30 * time.Second

// Postgres returns a migrated store on a fresh database created for this test and dropped when the
// test ends. Without TEST_DATABASE_URL the test is skipped, or fails when CI=true.
func Postgres(t testing.TB, opts db.Options) db.Store {
	t.Helper()
	return PostgresOn(t, PostgresDatabase(t), opts)
}

// PostgresOn returns a store on the database at dbURL (from PostgresDatabase), closed when the test
// ends: several of them on one database are replicas sharing it.
func PostgresOn(t testing.TB, dbURL string, opts db.Options) db.Store {
	t.Helper()
	s, err := postgres.Open(t.Context(), dbURL, opts, zaptest.NewLogger(t))
	if err != nil {
		t.Fatalf("open postgres store: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close postgres store: %v", err)
		}
	})
	return s
}

// PostgresDatabase creates an empty database for this test and returns its URL; it is dropped
// (after everything registered later with t.Cleanup has run) when the test ends. Without
// TEST_DATABASE_URL the test is skipped, or fails when CI=true.
func PostgresDatabase(t testing.TB) string {
	t.Helper()
	admin := postgresURL(t)
	name := "threadflow_test_" + db.NewToken()[:16]
	adminExec(t, admin, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	t.Cleanup(func() {
		// FORCE ends connections a failed test left open, so the drop never waits on them.
		adminExec(t, admin, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	})
	u, err := url.Parse(admin)
	if err != nil {
		t.Fatalf("%s is not a URL: %v", PostgresURLEnv, err)
	}
	u.Path = "/" + name
	return u.String()
}

// MissingPostgresDatabase returns the URL of a database that does not exist on the TEST_DATABASE_URL
// server, and its name. The URL carries a password (TEST_DATABASE_URL's, or a made-up one a trust
// login ignores), so a test can check that no message shows it. Without TEST_DATABASE_URL the test
// is skipped, or fails when CI=true.
func MissingPostgresDatabase(t testing.TB) (dbURL, name string) {
	t.Helper()
	u, err := url.Parse(postgresURL(t))
	if err != nil {
		t.Fatalf("%s is not a URL: %v", PostgresURLEnv, err)
	}
	if _, ok := u.User.Password(); !ok {
		u.User = url.UserPassword(u.User.Username(), "not-to-be-shown")
	}
	name = "threadflow_missing_" + db.NewToken()[:16]
	u.Path = "/" + name
	return u.String(), name
}

// postgresURL returns TEST_DATABASE_URL, or skips (fails on CI) when it is unset.
func postgresURL(t testing.TB) string {
	t.Helper()
	u := os.Getenv(PostgresURLEnv)
	if u == "" {
		testkit.Missing(t, "%s is not set; set it to a PostgreSQL server to run the PostgreSQL tests "+
			"(e.g. postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable)", PostgresURLEnv)
	}
	return u
}

// adminExec runs one statement on the admin database. It uses its own context because cleanups run
// after t.Context is cancelled.
func adminExec(t testing.TB, adminURL, stmt string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), adminTimeout)
	defer cancel()
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		t.Fatalf("connect to %s: %v", PostgresURLEnv, err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, stmt); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
}
