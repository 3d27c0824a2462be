package postgres_test

import (
	"testing"

	"threadflow/db"
	"threadflow/db/dbtest"
	"threadflow/db/drivertest"
	"threadflow/db/postgres"
)

// TestDriverConformance runs every update shape of the transition core through this engine's
// driver on a PostgreSQL database.
func TestDriverConformance(t *testing.T) {
	drivertest.Run(t, func(t *testing.T, opts db.Options) (db.Store, db.Driver) {
		s := dbtest.Postgres(t, opts).(*postgres.Store)
		return s, s.Machine.Driver
	})
}
