package postgres_test

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
	"sync"
	"testing"

	"go.uber.org/zap/zaptest"

	"threadflow/db"
	"threadflow/db/dbtest"
	"threadflow/db/postgres"
)

// TestConcurrentOpen is two replicas starting at the same moment on an empty database: both come up,
// and the migration lock made exactly one of them apply each migration.
func TestConcurrentOpen(t *testing.T) {
	url := dbtest.PostgresDatabase(t)
	const replicas = 2
	stores := make([]*postgres.Store, replicas)
	errs := make([]error, replicas)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range replicas {
		wg.Go(func() {
			<-start
			stores[i], errs[i] = postgres.Open(t.Context(), url, db.Options{}, zaptest.NewLogger(t))
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("replica %d: Open: %v", i, err)
		}
		t.Cleanup(func() { _ = stores[i].Close() })
		if err := stores[i].Ready(t.Context()); err != nil {
			t.Fatalf("replica %d: Ready: %v", i, err)
		}
	}
	if n := count(t, url, `SELECT count(*) FROM goose_db_version WHERE version_id = 1`); n != 1 {
		t.Fatalf("migration 1 recorded %d times, want once", n)
	}
}

// TestReadyReportsPendingMigrations: a store whose database lost a migration is not ready.
func TestReadyReportsPendingMigrations(t *testing.T) {
	url := dbtest.PostgresDatabase(t)
	s, err := postgres.Open(t.Context(), url, db.Options{}, nil)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	exec(t, url, `DELETE FROM goose_db_version WHERE version_id = (SELECT max(version_id) FROM goose_db_version)`)
	if err := s.Ready(t.Context()); !errors.Is(err, postgres.ErrPendingMigrations) {
		t.Fatalf("Ready with a missing migration: %v, want ErrPendingMigrations", err)
	}
}

// TestOpenErrors: a bad URL or an unreachable server gives an error saying so, never the password.
func TestOpenErrors(t *testing.T) {
	const password = "hunter2"
	tests := []struct {
		name string
		url  string
		want string // in the message
		is   error  // matched with errors.Is when set
	}{
		{"not a connection string", "postgres://%zz", "invalid database URL", nil},
		{"bad sslmode", "postgres://u:" + password + "@localhost/x?sslmode=sometimes", "invalid database URL", nil},
		{"nothing listening", "postgres://u:" + password + "@127.0.0.1:1/postgres?sslmode=disable&connect_timeout=5", "127.0.0.1:1", db.ErrUnavailable},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := postgres.Open(t.Context(), tc.url, db.Options{}, nil)
			if err == nil {
				_ = s.Close()
				t.Fatal("Open succeeded, want an error")
			}
			if !strings.Contains(err.Error(), tc.want) || (tc.is != nil && !errors.Is(err, tc.is)) {
				t.Fatalf("Open(%q) = %v, want an error mentioning %q (matching %v)", tc.url, err, tc.want, tc.is)
			}
			if strings.Contains(err.Error(), password) {
				t.Fatalf("Open error reveals the password: %v", err)
			}
		})
	}
}

// A URL naming a database the server does not have says how to create it, with the URL's host,
// port and user and without its password.
func TestOpenAMissingDatabaseSaysHowToCreateIt(t *testing.T) {
	dbURL, name := dbtest.MissingPostgresDatabase(t)
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	s, err := postgres.Open(t.Context(), dbURL, db.Options{}, nil)
	if err == nil {
		_ = s.Close()
		t.Fatal("Open of a missing database succeeded")
	}
	port := u.Port()
	if port == "" {
		port = "5432"
	}
	want := fmt.Sprintf("; create it with `createdb -h %s -p %s -U %s %s` (or `CREATE DATABASE %s;` in psql), or name an existing database in the URL",
		u.Hostname(), port, u.User.Username(), name, name)
	if !strings.HasSuffix(err.Error(), want) {
		t.Errorf("Open of a missing database = %v\nwant it to end with %q", err, want)
	}
	if password, _ := u.User.Password(); strings.Contains(err.Error(), password) {
		t.Errorf("the error shows the password: %v", err)
	}
}

// TestConnectionsBoundsThePool: a local command asks for a small pool (db.Options.Connections), a
// server gets the default, and pool_max_conns in the URL wins over both.
func TestConnectionsBoundsThePool(t *testing.T) {
	url := dbtest.PostgresDatabase(t)
	for _, c := range []struct {
		name        string
		url         string
		connections int32
		want        int32
	}{
		{"default", url, 0, 24},
		{"asked for", url, 2, 2},
		{"the URL wins", url + "&pool_max_conns=5", 2, 5},
	} {
		t.Run(c.name, func(t *testing.T) {
			s, err := postgres.Open(t.Context(), c.url, db.Options{Connections: c.connections}, nil)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer s.Close()
			if got := postgres.MaxConns(s); got != c.want {
				t.Fatalf("pool opens up to %d connections, want %d", got, c.want)
			}
		})
	}
}
