package metrics_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"threadflow/db"
	"threadflow/db/dbtest"
	"threadflow/metrics"
)

// clock is a settable time shared by the store and the metrics.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }

func (c *clock) Set(t time.Time) { c.mu.Lock(); defer c.mu.Unlock(); c.t = t }

func TestStoreGaugesFollowLeasesAndGates(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	clk := &clock{t: t0}
	ctx := context.Background()
	st := dbtest.SQLite(t, db.Options{Now: clk.Now})
	m := metrics.New(st, zaptest.NewLogger(t), clk.Now)
	if _, err := st.EnsureConversation(ctx, db.Conversation{ID: "test:c", Platform: "test", ChannelID: "c"}); err != nil {
		t.Fatal(err)
	}
	create := func(name string) {
		t.Helper()
		if _, err := st.CreateRun(ctx, db.NewRun{Workflow: name, ConversationID: "test:c", ParentConversationID: "test:c",
			UserID: "test:u", WorkflowSource: []byte("name: " + name)}); err != nil {
			t.Fatal(err)
		}
	}
	create("gated")
	create("busy")
	gated, err := st.ClaimRun(ctx, "w", time.Hour, db.Reach{}) // oldest first: the gated run
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.PauseRun(ctx, gated.Lease(), db.Pause{Kind: db.PauseApproval, Node: "ask", Message: "ship?", Since: clk.Now()}); err != nil {
		t.Fatal(err)
	}
	if _, err := st.ClaimRun(ctx, "w", time.Minute, db.Reach{}); err != nil {
		t.Fatal(err)
	}

	tests := []struct {
		name    string
		at      time.Time
		leases  float64
		gates   float64
		gateAge float64
	}{
		{"lease held, gate just asked", t0, 1, 1, 0},
		{"45s later, lease still held", t0.Add(45 * time.Second), 1, 1, 45},
		{"lease expired: the run is interrupted, not active", t0.Add(2 * time.Minute), 0, 1, 120},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk.Set(tt.at)
			for series, want := range map[string]float64{
				"threadflow_active_leases": tt.leases, "threadflow_gates_waiting": tt.gates, "threadflow_gate_oldest_age_seconds": tt.gateAge,
			} {
				if got := value(t, m, series); got != want {
					t.Errorf("%s = %v, want %v", series, got, want)
				}
			}
		})
	}
}
