package orchestrator_test

import (
	"context"
	"testing"
	"time"

	"threadflow/db"
	"threadflow/testkit"
)

// TestEndedWakesAfterTheLastWrite: a terminal waiting for its run wakes when the execution ends,
// and by then the run's final status is committed, so reading it once is enough.
func TestEndedWakesAfterTheLastWrite(t *testing.T) {
	eachEngineSerial(t, func(t *testing.T, h *harness) {
		h.writeWorkflow("two", "name: two\nnodes:\n  - id: a\n    bash: \"true\"\n  - id: b\n    bash: \"true\"\n    depends_on: [a]\n")
		ended := h.engine.Workers.Ended()
		h.say(admin, "", "/workflow run two")
		select {
		case <-ended:
		case <-time.After(testkit.Deadline):
			t.Fatal("Ended did not wake after the run's execution")
		}
		runs := h.runs("two")
		if len(runs) != 1 {
			t.Fatalf("%d runs of two, want 1", len(runs))
		}
		run, err := h.store.GetRun(context.Background(), runs[0].ID)
		if err != nil || run.Status != db.StatusCompleted {
			t.Fatalf("run when Ended woke: %s, %v; want completed", run.Status, err)
		}
		if again := h.engine.Workers.Ended(); again == ended {
			t.Error("Ended returned the closed channel again; a later wait would not block")
		}
	})
}
