package postgres_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"threadflow/db"
	"threadflow/db/dbtest"
	"threadflow/db/postgres"
	"threadflow/db/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T, opts db.Options) db.Store { return dbtest.Postgres(t, opts) })
}

// TestConcurrentIdempotentRecord is a worker's retry racing its original write: every copy of the
// same node_completed succeeds with the one stored event, and seq stays gap-free.
func TestConcurrentIdempotentRecord(t *testing.T) {
	s := dbtest.Postgres(t, db.Options{})
	ctx := t.Context()
	if _, err := s.EnsureConversation(ctx, db.Conversation{ID: "slack:C1", Platform: "slack", ChannelID: "C1"}); err != nil {
		t.Fatalf("EnsureConversation: %v", err)
	}
	created, err := s.CreateRun(ctx, db.NewRun{Workflow: "build", ConversationID: "slack:C1", ParentConversationID: "slack:C1"})
	if err != nil {
		t.Fatalf("CreateRun: %v", err)
	}
	r, err := s.ClaimRun(ctx, "worker-1", time.Minute, db.Reach{})
	if err != nil || r.ID != created.ID {
		t.Fatalf("ClaimRun = %s, %v", r.ID, err)
	}
	done := db.Event{Type: db.EventNodeCompleted, NodeID: "build", Attempt: 1, Data: json.RawMessage(`{"output":"ok"}`)}
	const writers = 16
	seqs := make([]int64, writers)
	errs := make([]error, writers)
	var wg sync.WaitGroup
	for i := range writers {
		wg.Go(func() {
			var ev db.Event
			ev, errs[i] = s.RecordEvent(ctx, r.Lease(), done)
			seqs[i] = ev.Seq
		})
	}
	wg.Wait()
	for i := range writers {
		if errs[i] != nil || seqs[i] != 3 {
			t.Fatalf("writer %d: seq %d, %v; want the one stored event, seq 3", i, seqs[i], errs[i])
		}
	}
	evs, err := s.Events(ctx, r.ID)
	if err != nil || len(evs) != 3 {
		t.Fatalf("Events = %d events, %v; want run_created, run_claimed, node_completed", len(evs), err)
	}
}

// count runs a count query on the database at url.
func count(t *testing.T, url, q string) int {
	t.Helper()
	conn := connect(t, url)
	var n int
	if err := conn.QueryRow(t.Context(), q).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

// exec runs a statement on the database at url.
func exec(t *testing.T, url, stmt string) {
	t.Helper()
	if _, err := connect(t, url).Exec(t.Context(), stmt); err != nil {
		t.Fatalf("%s: %v", stmt, err)
	}
}

func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(t.Context(), url)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

// A batch of events is one implicit transaction on the server: when its second event fails, the
// first is not committed either, and both say so (Machine.RecordEvents).
func TestRecordEventsIsOneTransaction(t *testing.T) {
	url := dbtest.PostgresDatabase(t)
	s := dbtest.PostgresOn(t, url, db.Options{})
	ctx := t.Context()
	exec(t, url, `CREATE FUNCTION refuse() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$;
		CREATE TRIGGER refuse BEFORE INSERT ON run_events FOR EACH ROW WHEN (NEW.node_id = 'code') EXECUTE FUNCTION refuse()`)
	if _, err := s.EnsureConversation(ctx, db.Conversation{ID: "slack:C1", Platform: "slack", ChannelID: "C1"}); err != nil {
		t.Fatalf("EnsureConversation: %v", err)
	}
	if _, err := s.CreateRun(ctx, db.NewRun{Workflow: "build", ConversationID: "slack:C1", ParentConversationID: "slack:C1"}); err != nil {
		t.Fatalf("CreateRun: %v", err)
	}
	r, err := s.ClaimRun(ctx, "worker-1", time.Minute, db.Reach{})
	if err != nil {
		t.Fatalf("ClaimRun: %v", err)
	}
	_, errs := s.RecordEvents(ctx, r.Lease(), []db.Event{
		{Type: db.EventNodeCompleted, NodeID: "plan", Attempt: 1, Data: json.RawMessage(`{"output":"ok"}`)},
		{Type: db.EventNodeStarted, NodeID: "code", Attempt: 1},
	})
	for i, err := range errs {
		if err == nil || !strings.Contains(err.Error(), "refused by the test") {
			t.Errorf("event %d: %v; want the refusal", i, err)
		}
	}
	if n := count(t, url, `SELECT count(*) FROM run_events WHERE node_id = 'plan'`); n != 0 {
		t.Errorf("plan's node_completed was committed (%d rows) though its batch failed", n)
	}
}

// TransitAll sends its compare-and-sets at once: one that matches moves its run and appends its
// events at the run's next seqs; one whose guard fails changes nothing and appends nothing.
func TestTransitAllAppendsOnlyForWhatMatched(t *testing.T) {
	s := dbtest.Postgres(t, db.Options{}).(*postgres.Store)
	ctx := t.Context()
	if _, err := s.EnsureConversation(ctx, db.Conversation{Platform: "slack", ChannelID: "C1"}); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for range 2 {
		r, err := s.CreateRun(ctx, db.NewRun{Workflow: "build", ConversationID: "slack:C1"})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.ID)
	}
	now := time.Now().UTC().Truncate(time.Microsecond)
	claim := func(id string, from db.Status) db.Transit {
		return db.Transit{
			Update: db.RunUpdate{RunID: id, From: []db.Status{from}, Set: db.RunSet{Status: db.StatusRunning,
				Lease: &db.Lease{Owner: "replica-a", Token: db.NewToken()}, ExpiresAt: now.Add(time.Minute)}},
			Events: []db.Event{{RunID: id, Type: db.EventRunClaimed, Data: json.RawMessage(`{"owner":"replica-a"}`), At: now},
				{RunID: id, Type: db.EventNodeStarted, NodeID: "n", Attempt: 1, At: now}},
		}
	}
	runs, ok, err := postgres.TransitAll(ctx, s, []db.Transit{claim(ids[0], db.StatusQueued), claim(ids[1], db.StatusPaused)})
	if err != nil || !ok[0] || ok[1] || runs[0].Status != db.StatusRunning || runs[0].LeaseOwner != "replica-a" {
		t.Fatalf("TransitAll = %+v, %v, %v; want the first moved to running and the second refused", runs, ok, err)
	}
	evs, err := s.Events(ctx, ids[0])
	if err != nil || len(evs) != 3 || evs[1].Type != db.EventRunClaimed || evs[1].Seq != 2 || evs[2].Type != db.EventNodeStarted ||
		evs[2].Seq != 3 || evs[2].NodeID != "n" || evs[2].Attempt != 1 || string(evs[1].Data) != `{"owner": "replica-a"}` {
		t.Fatalf("events of the moved run = %+v, %v; want run_created, run_claimed (2), node_started n/1 (3)", evs, err)
	}
	if evs, err := s.Events(ctx, ids[1]); err != nil || len(evs) != 1 {
		t.Fatalf("events of the refused run = %+v, %v; want only run_created", evs, err)
	}
	if r, err := s.GetRun(ctx, ids[1]); err != nil || r.Status != db.StatusQueued {
		t.Fatalf("refused run = %s, %v; want it still queued", r.Status, err)
	}
	// The moved run's next event continues after the two it got.
	if ev, err := s.RecordEvent(ctx, runs[0].Lease(), db.Event{Type: db.EventNodeCompleted, NodeID: "n", Attempt: 1}); err != nil || ev.Seq != 4 {
		t.Fatalf("next event = seq %d, %v; want 4", ev.Seq, err)
	}
}
