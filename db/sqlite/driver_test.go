package sqlite_test

import (
	"testing"

	"threadflow/db"
	"threadflow/db/dbtest"
	"threadflow/db/drivertest"
	"threadflow/db/sqlite"
)

// TestDriverConformance runs every update shape of the transition core through this engine's
// driver on a SQLite file.
func TestDriverConformance(t *testing.T) {
	drivertest.Run(t, func(t *testing.T, opts db.Options) (db.Store, db.Driver) {
		s := dbtest.SQLite(t, opts).(*sqlite.Store)
		return s, s.Machine.Driver
	})
}
