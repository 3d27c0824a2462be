package maintenance_test

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"threadflow/db"
	"threadflow/db/dbtest"
	"threadflow/db/storetest"
	"threadflow/orchestrator/execution"
	"threadflow/orchestrator/maintenance"
)

// A run past RETENTION disappears with its events and its directory under THREADFLOW_HOME/runs; a
// newer run and a paused one stay with theirs (issue 34), on both engines.
func TestPrunerDeletesRunsPastRetentionWithTheirFiles(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, open func(t testing.TB, opts db.Options) db.Store) {
		clock := storetest.NewClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
		st := open(t, db.Options{Now: clock.Now})
		dirs := execution.Dirs{Home: t.TempDir()}
		if _, err := st.EnsureConversation(t.Context(), db.Conversation{ID: "slack:C1", Platform: "slack", ChannelID: "C1"}); err != nil {
			t.Fatal(err)
		}
		old := finishedRun(t, st, dirs, true)
		paused := finishedRun(t, st, dirs, false)
		clock.Advance(100 * 24 * time.Hour)
		recent := finishedRun(t, st, dirs, true)

		p := &maintenance.Pruner{Store: st, Dirs: dirs, Retention: db.DefaultRetention, Log: zaptest.NewLogger(t)}
		got, err := p.Once(t.Context(), false)
		if err != nil {
			t.Fatalf("prune: %v", err)
		}
		if got.Runs != 1 || got.Events < 3 {
			t.Errorf("prune = %+v, want 1 run with its events", got)
		}
		if _, err := st.GetRun(t.Context(), old); !errors.Is(err, db.ErrNotFound) {
			t.Errorf("run past RETENTION: %v, want it deleted", err)
		}
		if _, err := os.Stat(dirs.RunDir(old)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("directory of the run past RETENTION: %v, want it deleted", err)
		}
		for _, id := range []string{paused, recent} {
			if _, err := st.GetRun(t.Context(), id); err != nil {
				t.Errorf("run %s: %v, want it kept", id, err)
			}
			if _, err := os.Stat(filepath.Join(dirs.WorkPath(id), "notes.txt")); err != nil {
				t.Errorf("file of kept run %s: %v", id, err)
			}
		}
	})
}

// finishedRun makes a run that worked in its directory (a file in it) and then completed, or
// paused at a gate when complete is false.
func finishedRun(t *testing.T, st db.Store, dirs execution.Dirs, complete bool) string {
	t.Helper()
	ctx := t.Context()
	r, err := st.CreateRun(ctx, db.NewRun{Workflow: "w", ConversationID: "slack:C1", ParentConversationID: "slack:C1", UserID: "slack:U1",
		UserMessage: "go", WorkingPath: "", WorkflowSource: []byte("name: w\n")})
	if err != nil {
		t.Fatal(err)
	}
	r, err = st.ClaimRun(ctx, "w1", time.Minute, db.Reach{})
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dirs.WorkPath(r.ID), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dirs.WorkPath(r.ID), "notes.txt"), []byte("work"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := st.RecordEvent(ctx, r.Lease(), db.NewEvent(r.ID, "a", 1, db.NodeStartedData{}, time.Time{})); err != nil {
		t.Fatal(err)
	}
	if complete {
		_, err = st.CompleteRun(ctx, r.Lease(), "done")
	} else {
		_, err = st.PauseRun(ctx, r.Lease(), db.Pause{Kind: db.PauseApproval, Node: "a", Message: "ok?"})
	}
	if err != nil {
		t.Fatal(err)
	}
	return r.ID
}
