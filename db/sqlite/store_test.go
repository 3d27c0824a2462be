package sqlite_test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"threadflow/db"
	"threadflow/db/sqlite"
	"threadflow/db/storetest"
)

func TestConformance(t *testing.T) {
	storetest.Run(t, func(t *testing.T, opts db.Options) db.Store {
		s, err := sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "threadflow.db"), opts, zaptest.NewLogger(t, zaptest.Level(zap.InfoLevel)))
		if err != nil {
			t.Fatalf("open: %v", err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}

// BenchmarkNodeEventsBigSource is the per-node write path of a run whose frozen workflow source is
// 270 KB (a 5,000-node workflow): one node_started and one node_completed per node. Before the
// run's seq left the runs row, each event rewrote that row with its source (issue 34).
//
//	go test -run '^$' -bench NodeEventsBigSource ./db/sqlite/
func BenchmarkNodeEventsBigSource(b *testing.B) {
	for _, size := range []int{1 << 10, 270 << 10} {
		b.Run(fmt.Sprintf("source=%dKB", size>>10), func(b *testing.B) {
			s, err := sqlite.Open(b.Context(), filepath.Join(b.TempDir(), "t.db"), db.Options{}, zap.NewNop())
			if err != nil {
				b.Fatal(err)
			}
			defer func() { _ = s.Close() }()
			if _, err := s.EnsureConversation(b.Context(), db.Conversation{ID: "slack:C1", Platform: "slack", ChannelID: "C1"}); err != nil {
				b.Fatal(err)
			}
			if _, err := s.CreateRun(b.Context(), db.NewRun{Workflow: "w", ConversationID: "slack:C1", ParentConversationID: "slack:C1",
				UserID: "slack:U1", UserMessage: "go", WorkingPath: b.TempDir(), WorkflowSource: bytes.Repeat([]byte("x"), size)}); err != nil {
				b.Fatal(err)
			}
			r, err := s.ClaimRun(b.Context(), "w1", time.Hour, db.Reach{})
			if err != nil {
				b.Fatal(err)
			}
			l := r.Lease()
			b.ResetTimer()
			for i := range b.N {
				node := fmt.Sprintf("n%d", i)
				for _, typ := range []db.EventType{db.EventNodeStarted, db.EventNodeCompleted} {
					if _, err := s.RecordEvent(b.Context(), l, db.Event{RunID: r.ID, Type: typ, NodeID: node, Attempt: 1, Data: []byte(`{}`), At: time.Now()}); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
