package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/zap"

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

// BenchmarkNodeCompletionAndNextStart is a chain's per-node write on PostgreSQL: a node's
// node_completed and the next node's node_started, committed together, as one statement
// (AppendLeasedAll) against one statement per event in one batch (its fallback), in the same run
// (issue 34).
//
//	go test -run '^$' -bench NodeCompletionAndNextStart ./db/postgres/
func BenchmarkNodeCompletionAndNextStart(b *testing.B) {
	s, err := postgres.Open(b.Context(), dbtest.PostgresDatabase(b), db.Options{}, zap.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	defer func() { _ = s.Close() }()
	if _, err := s.EnsureConversation(b.Context(), db.Conversation{ID: "slack:C1", Platform: "slack", ChannelID: "C1"}); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name   string
		append func(*postgres.Store, context.Context, db.Lease, []db.Event) ([]bool, error)
	}{{"one statement", postgres.AppendAll}, {"statement per event", postgres.AppendEach}} {
		b.Run(c.name, func(b *testing.B) {
			if _, err := s.CreateRun(b.Context(), db.NewRun{Workflow: "w", ConversationID: "slack:C1", ParentConversationID: "slack:C1",
				UserID: "slack:U1", UserMessage: "go", WorkflowSource: []byte("name: w\n")}); err != nil {
				b.Fatal(err)
			}
			r, err := s.ClaimRun(b.Context(), "w1", time.Hour, db.Reach{})
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := range b.N {
				es := []db.Event{
					db.NewEvent(r.ID, fmt.Sprintf("n%d", i), 1, db.NodeCompletedData{}, time.Now()),
					db.NewEvent(r.ID, fmt.Sprintf("n%d", i+1), 1, db.NodeStartedData{}, time.Now()),
				}
				if ok, err := c.append(s, b.Context(), r.Lease(), es); err != nil || !ok[0] || !ok[1] {
					b.Fatalf("append: %v %v", ok, err)
				}
			}
		})
	}
}
