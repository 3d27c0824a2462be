package dbtest

import (
	"testing"

	"threadflow/db"
)

// ForEachEngine runs f once per database engine, as the subtests "sqlite" and "postgres", handing it
// that engine's opener. The postgres subtest skips without TEST_DATABASE_URL (and fails on CI).
func ForEachEngine(t *testing.T, f func(t *testing.T, open func(t testing.TB, opts db.Options) db.Store)) {
	t.Helper()
	engines := []struct {
		name string
		open func(t testing.TB, opts db.Options) db.Store
	}{
		{"sqlite", SQLite},
		{"postgres", Postgres},
	}
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) { f(t, e.open) })
	}
}
