// Package dbtest holds helpers that give tests a real, migrated store on each engine, so tests of
// the packages above db run against the database they will meet in production, not a mock.
package dbtest

import (
	"path/filepath"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"threadflow/db"
	"threadflow/db/sqlite"
)

// SQLite opens a fresh store on a new database file in t.TempDir(), migrated, and closes it when
// the test ends. Pass opts.Now to control lease expiry.
func SQLite(t testing.TB, opts db.Options) db.Store {
	t.Helper()
	return SQLiteAt(t, filepath.Join(t.TempDir(), "threadflow.db"), opts)
}

// SQLiteAt opens a store on the database file at path, creating it when new, and closes it when
// the test ends: opening the same path again is a restart.
func SQLiteAt(t testing.TB, path string, opts db.Options) db.Store {
	t.Helper()
	s, err := sqlite.Open(t.Context(), path, opts, zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel)))
	if err != nil {
		t.Fatalf("dbtest: open sqlite store: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("dbtest: close sqlite store: %v", err)
		}
	})
	return s
}
