package postgres_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	"threadflow/db"
	"threadflow/db/dbtest"
	"threadflow/db/postgres"
)

// A lease renewal does not queue behind the replica's other statements: with every connection of
// the main pool taken, it still renews on a connection of its own. Behind a replica's own burst of
// work a renewal came too late and the replica's rescuer took its own runs for crashed.
func TestLeaseRenewalHasAConnectionOfItsOwn(t *testing.T) {
	u, err := url.Parse(dbtest.PostgresDatabase(t))
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("pool_max_conns", "1")
	u.RawQuery = q.Encode()
	s, err := postgres.Open(t.Context(), u.String(), db.Options{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	ctx := t.Context()
	if _, err := s.EnsureConversation(ctx, db.Conversation{Platform: "slack", ChannelID: "C1"}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.CreateRun(ctx, db.NewRun{Workflow: "build", ConversationID: "slack:C1"}); err != nil {
		t.Fatal(err)
	}
	r, err := s.ClaimRun(ctx, "replica-a", time.Minute, db.Reach{})
	if err != nil {
		t.Fatal(err)
	}
	busy, err := postgres.Pool(s).Acquire(ctx) // the main pool's only connection, as a burst would hold it
	if err != nil {
		t.Fatal(err)
	}
	defer busy.Release()
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if lost, err := s.RenewLeases(cctx, []db.Lease{r.Lease()}, time.Hour); err != nil || len(lost) > 0 {
		t.Fatalf("RenewLeases with the main pool taken = lost %v, %v; want the lease renewed", lost, err)
	}
}
