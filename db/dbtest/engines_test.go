package dbtest_test

import (
	"testing"
	"time"

	"threadflow/db"
	"threadflow/db/dbtest"
)

// TestForEachEngine: every engine gives a fresh, migrated store that sees the injected clock, and
// two opens in one test do not share data.
func TestForEachEngine(t *testing.T) {
	start := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	var ran []string
	dbtest.ForEachEngine(t, func(t *testing.T, open func(t testing.TB, opts db.Options) db.Store) {
		ran = append(ran, t.Name())
		s := open(t, db.Options{Now: func() time.Time { return start }})
		if err := s.Ready(t.Context()); err != nil {
			t.Fatalf("Ready: %v", err)
		}
		c, err := s.EnsureConversation(t.Context(), db.Conversation{ID: "console:tty", Platform: "console", ChannelID: "tty"})
		if err != nil || c.ID != "console:tty" || !c.CreatedAt.Equal(start) {
			t.Fatalf("EnsureConversation = %+v, %v; want console:tty created at %v", c, err, start)
		}
		other := open(t, db.Options{})
		if runs, err := other.ListRuns(t.Context(), db.RunFilter{}); err != nil || len(runs) != 0 {
			t.Fatalf("a second store sees %d runs (%v); want a fresh, empty database", len(runs), err)
		}
		if first, err := other.MarkInbound(t.Context(), "console", "e1"); err != nil || !first {
			t.Fatalf("MarkInbound on the second store = %v, %v; want first", first, err)
		}
		if first, err := s.MarkInbound(t.Context(), "console", "e1"); err != nil || !first {
			t.Fatalf("MarkInbound on the first store = %v, %v; the stores share a database", first, err)
		}
	})
	if len(ran) != 2 {
		t.Fatalf("ForEachEngine ran %v, want sqlite and postgres", ran)
	}
}
