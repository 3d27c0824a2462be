package main

import (
	"slices"
	"syscall"
	"testing"

	"threadflow/db/dbtest"
)

// Two replicas starting at the same moment against one empty database race to migrate it; the
// migration lock must let both become ready rather than one failing on a half-created schema.
func TestProcessReplicasStartTogetherOnEmptyPostgres(t *testing.T) {
	dbURL := dbtest.PostgresDatabase(t) // skips without TEST_DATABASE_URL unless CI=true
	env := []string{"DATABASE_URL=" + dbURL, "HTTP_ADDR=127.0.0.1:0"}
	replicas := []*botProcess{
		startBot(t, t.TempDir(), slices.Concat(env, []string{"REPLICA_ID=a"})...),
		startBot(t, t.TempDir(), slices.Concat(env, []string{"REPLICA_ID=b"})...),
	}
	for _, p := range replicas {
		assertReady(t, waitURL(t, p.stdout, p.exited, p.stderr))
	}
	for _, p := range replicas {
		p.stop(t, syscall.SIGTERM)
	}
}
