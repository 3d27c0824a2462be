package orchestrator_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"threadflow/db"
)

// Progress notices are paced (at most one per 100 ms), but the status message always catches up
// with the last change: a node that ends right after the notice of its own start is shown
// completed, and the next one running, while that next node runs, however long it takes.
func TestStatusShowsTheLastChangeWhileALongNodeRuns(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		release := filepath.Join(h.home, "release")
		h.writeWorkflow("pair", `
name: pair
nodes:
  - id: first
    bash: "true"
  - id: quick
    depends_on: [first]
    bash: "true"
  - id: slow
    depends_on: [quick]
    bash: while [ ! -e '`+release+`' ]; do sleep 0.01; done
`)
		run := h.startRun("pair", "")
		h.waitFor("the status message to show quick completed and slow running", func() bool {
			for _, m := range h.out.Find("Status of run") {
				if strings.Contains(m.Text, "✓ quick") && strings.Contains(m.Text, "▶ slow") {
					return true
				}
			}
			return false
		})
		if err := os.WriteFile(release, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		h.waitStatus(run.ID, db.StatusCompleted)
	})
}

// The status message in the run's thread shows the node a paused run waits at as waiting, and once
// the gate is rejected, every node as the run's end left it: the gate rejected, the rest not run.
func TestStatusMessageShowsTheGateWaitingThenRejected(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		h.writeWorkflow("gated", "name: gated\nnodes:\n  - id: build\n    bash: \"true\"\n  - id: confirm\n    depends_on: [build]\n    approval: {message: ship it}\n  - id: ship\n    depends_on: [confirm]\n    bash: \"true\"\n")
		run := h.waitStatus(h.startRun("gated", "").ID, db.StatusPaused)
		status := func(want ...string) {
			t.Helper()
			h.waitFor(fmt.Sprintf("the status message to show %q", want), func() bool {
				for _, m := range h.out.Find("Status of run " + run.ID) {
					if all(m.Text, want...) {
						return true
					}
				}
				return false
			})
		}
		status("paused", "✓ build", "⏸ confirm", "· ship")
		h.say(admin, "", "/workflow reject "+run.ID+" not today")
		status("cancelled", "✓ build", "🛑 confirm", "○ ship")
	})
}

func all(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}
