package orchestrator_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"threadflow/db"
)

// Archon's fan-out workflows end as their headers say. e2e-fanout-alldone completes: its three
// children of e2e-echo-child (one failing on purpose) are aggregated, the failed one as a marked
// object, and its verify node finds all three. e2e-fanout-allsuccess fails at `spread`, naming the
// failed child, and `report` is skipped. Each item has its own child run.
func TestArchonSelfCheckingWorkflowsEndAsTheirHeadersSay(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		h.withArchon(map[string]string{
			"workflows/test-workflows/e2e-echo-child.yaml":        fixture(t, "test-workflows/e2e-echo-child.yaml"),
			"workflows/test-workflows/e2e-fanout-alldone.yaml":    fixture(t, "test-workflows/e2e-fanout-alldone.yaml"),
			"workflows/test-workflows/e2e-fanout-allsuccess.yaml": fixture(t, "test-workflows/e2e-fanout-allsuccess.yaml"),
		})
		done := h.waitStatus(h.startRun("e2e-fanout-alldone", "").ID, db.StatusCompleted, db.StatusFailed)
		if done.Status != db.StatusCompleted {
			t.Fatalf("e2e-fanout-alldone %s: %+v", done.Status, done.Meta.LastError)
		}
		if got := nodeOutput(t, h.events(done.ID), "verify"); !strings.HasSuffix(got, "ALL_DONE AGGREGATED A FAILED CHILD OK") {
			t.Errorf("verify said %q", got)
		}
		want := `["child-ok: one","child-ok: two",{"archon_failed":true,"error":`
		if got := nodeOutput(t, h.events(done.ID), "spread"); !strings.HasPrefix(got, want) || !strings.HasSuffix(got, `"status":"failed"}]`) {
			t.Errorf("spread's output = %s; want the children's outputs in item order, the failed one marked", got)
		}
		h.checkChildren(done, "spread", db.StatusCompleted, db.StatusCompleted, db.StatusFailed)

		failed := h.waitStatus(h.startRun("e2e-fanout-allsuccess", "").ID, db.StatusCompleted, db.StatusFailed)
		le := failed.Meta.LastError
		if failed.Status != db.StatusFailed || le == nil || le.Node != "spread" || !strings.Contains(le.Message, "item 2's child run") {
			t.Fatalf("e2e-fanout-allsuccess %s: %+v; want failed at spread, naming item 2's child", failed.Status, le)
		}
		if !skipped(h.events(failed.ID), "report") {
			t.Error("report was not skipped")
		}
		h.checkChildren(failed, "spread", db.StatusCompleted, db.StatusCompleted, db.StatusFailed)
	})
}

// checkChildren checks that run's node started one child run per item, by its derived id, each
// ended as want says.
func (h *harness) checkChildren(run db.Run, node string, want ...db.Status) {
	h.t.Helper()
	kids := h.children(run)
	if len(kids) != len(want) {
		h.t.Fatalf("%s has %d child runs, want %d: %+v", run.ID, len(kids), len(want), kids)
	}
	for i, st := range want {
		k, err := h.store.GetRun(context.Background(), db.ChildRunID(run.ID, node, i))
		if err != nil || k.Status != st || k.ParentNode != node {
			h.t.Errorf("item %d's child: %s by %s, %v; want %s, started by %s", i, k.Status, k.ParentNode, err, st, node)
		}
	}
}

func skipped(events []db.Event, node string) bool {
	for _, e := range events {
		if e.Type == db.EventNodeSkipped && e.NodeID == node {
			return true
		}
	}
	return false
}

// gatedChild is a child workflow that says it started (DIR/start.ITEM), then waits until the test
// lets it go on (DIR/go.ITEM); the item `bad` fails at once.
func gatedChild(dir string) string {
	return strings.ReplaceAll(`name: gated
nodes:
  - id: work
    bash: |
      if [ "$ARGUMENTS" = bad ]; then echo "bad item" >&2; exit 1; fi
      touch "DIR/start.$ARGUMENTS"
      while [ ! -e "DIR/go.$ARGUMENTS" ]; do sleep 0.02; done
      echo "did $ARGUMENTS"
`, "DIR", dir)
}

// TestFanOutStartsOneChildPerItemAtMostMaxParallelAtOnce: a workflow node of our own YAML with
// fan_out starts one child run per item of a list an upstream node printed, never more than
// max_parallel unfinished at once (seen by holding the children until the test lets them go), and
// its output is the children's outputs in item order, a failed child marked in its place.
func TestFanOutStartsOneChildPerItemAtMostMaxParallelAtOnce(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		d := t.TempDir()
		h.writeWorkflow("gated", gatedChild(d))
		h.writeWorkflow("spread", `name: spread
nodes:
  - id: list
    bash: echo '["a", "b", "c", "bad"]'
  - id: each
    depends_on: [list]
    workflow: gated
    fan_out:
      items: $list.output
      max_parallel: 2
`)
		run := h.startRun("spread", "")
		// started waits for the held children of items to start: they hold both slots, so no
		// other child may exist yet than those and the ended ones.
		started := func(ended int, items ...string) {
			t.Helper()
			for _, it := range items {
				h.waitFor("the child of "+it+" to start", func() bool { _, err := os.Stat(filepath.Join(d, "start."+it)); return err == nil })
			}
			if kids := h.children(run); len(kids) != ended+len(items) {
				t.Fatalf("%d children exist while %v hold both slots and %d ended; want %d", len(kids), items, ended, ended+len(items))
			}
		}
		release := func(item string) {
			if err := os.WriteFile(filepath.Join(d, "go."+item), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		started(0, "a", "b")
		release("a")
		h.waitStatus(db.ChildRunID(run.ID, "each", 0), db.StatusCompleted)
		started(1, "b", "c") // a ended: c took its slot
		release("b")
		release("c")
		run = h.waitCompleted(run.ID)
		out := nodeOutput(t, h.events(run.ID), "each")
		if !strings.HasPrefix(out, `["did a","did b","did c",{"error":"`) || !strings.Contains(out, `"failed":true,"status":"failed"}]`) {
			t.Errorf("each's output = %s; want the children's outputs in item order, the failed one marked", out)
		}
		if run.Meta.Output != out {
			t.Errorf("the run completed with %q, want each's output", run.Meta.Output)
		}
		h.checkChildren(run, "each", db.StatusCompleted, db.StatusCompleted, db.StatusCompleted, db.StatusFailed)
	})
}

// A fan_out whose items are not a JSON list fails its node, naming it, before any child starts.
func TestFanOutItemsThatAreNotAListFailTheNode(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		h.writeWorkflow("gated", gatedChild(t.TempDir()))
		h.writeWorkflow("spread", "name: spread\nnodes:\n  - id: list\n    bash: echo 'a, b'\n  - id: each\n    depends_on: [list]\n    workflow: gated\n    fan_out:\n      items: $list.output\n")
		run := h.waitStatus(h.startRun("spread", "").ID, db.StatusFailed)
		if le := run.Meta.LastError; le == nil || le.Node != "each" || !strings.Contains(le.Message, "node each: `fan_out.items` is not a JSON list") {
			t.Fatalf("last error = %+v", run.Meta.LastError)
		}
		if kids := h.children(run); len(kids) != 0 {
			t.Errorf("%d children started", len(kids))
		}
	})
}

// An Archon cancel node cancels its run with its reason: the thread says so, the nodes still
// running stop (shown cancelled), the node after it never runs, and the cancel node itself completes
// with the reason as its output.
func TestArchonCancelNodeCancelsTheRunWithItsReason(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		h.withArchon(map[string]string{"workflows/cancel.yaml": `name: stopper
description: stops when blocked
nodes:
  - id: check
    bash: echo blocked
  - id: slow
    bash: sleep 60
  - id: stop-if-blocked
    depends_on: [check]
    when: "$check.output == 'blocked'"
    cancel: "PR has merge conflicts ($check.output)"
  - id: review
    depends_on: [stop-if-blocked]
    bash: echo reviewed
`})
		run := h.waitStatus(h.startRun("stopper", "").ID, db.StatusCancelled)
		h.waitMessage("was cancelled by its node stop-if-blocked: PR has merge conflicts (blocked)")
		if got := nodeOutput(t, h.events(run.ID), "stop-if-blocked"); got != "PR has merge conflicts (blocked)" {
			t.Errorf("the cancel node's output = %q", got)
		}
		for _, e := range h.events(run.ID) {
			if e.NodeID == "review" {
				t.Errorf("review has an event %s: it ran after the cancel", e.Type)
			}
		}
		h.waitFor("the bot to stop working on it", func() bool {
			r, err := h.store.GetRun(context.Background(), run.ID)
			return err == nil && r.LeaseOwner == ""
		})
		status := joined(h.say(admin, "", "/workflow status "+run.ID))
		for _, want := range []string{"slow", "cancelled", "PR has merge conflicts (blocked)"} {
			if !strings.Contains(status, want) {
				t.Errorf("/workflow status says %q, without %q", status, want)
			}
		}
	})
}

// An Archon node with always_run runs again when the run is explicitly resumed, even though it
// completed before; so does a completed node after it once its output changed (Archon's engine
// does the same); a node without either keeps what it completed with.
func TestArchonAlwaysRunNodeRunsAgainOnResume(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		d := t.TempDir()
		h.withArchon(map[string]string{"workflows/again.yaml": strings.ReplaceAll(`name: again
description: fetches again on resume
nodes:
  - id: fetch
    always_run: true
    bash: echo x >> "$D/fetch"; wc -l < "$D/fetch"
  - id: once
    bash: echo x >> "$D/once"; wc -l < "$D/once"
  - id: mid
    depends_on: [fetch]
    bash: echo "saw $fetch.output"
  - id: use
    depends_on: [mid, once]
    bash: cat "$D/flag" && echo " $mid.output once=$once.output"
`, "$D", d)})
		run := h.waitStatus(h.startRun("again", "").ID, db.StatusFailed)
		if err := os.WriteFile(filepath.Join(d, "flag"), []byte("fixed"), 0o600); err != nil {
			t.Fatal(err)
		}
		h.say(admin, "", "/workflow resume "+run.ID)
		run = h.waitCompleted(run.ID)
		if got := nodeOutput(t, h.events(run.ID), "use"); got != "fixed saw 2 once=1" {
			t.Errorf("use said %q; want fetch run again on the resume, once not", got)
		}
	})
}

// Cancelling a fan-out's parent cancels every child it started, and no other child starts.
func TestCancellingAFanOutParentCancelsEveryChild(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		d := t.TempDir()
		h.writeWorkflow("gated", gatedChild(d))
		h.writeWorkflow("spread", "name: spread\nnodes:\n  - id: each\n    workflow: gated\n    fan_out:\n      items: '[\"a\", \"b\", \"c\"]'\n      max_parallel: 2\n")
		run := h.startRun("spread", "")
		for _, it := range []string{"a", "b"} {
			h.waitFor("the child of "+it+" to start", func() bool { _, err := os.Stat(filepath.Join(d, "start."+it)); return err == nil })
		}
		if _, err := h.store.CancelRun(context.Background(), run.ID, db.Actor{ID: admin}, "not needed"); err != nil {
			t.Fatal(err)
		}
		for i := range 2 {
			h.waitStatus(db.ChildRunID(run.ID, "each", i), db.StatusCancelled)
		}
		h.waitFor("the parent's worker to let it go", func() bool {
			r, err := h.store.GetRun(context.Background(), run.ID)
			return err == nil && r.LeaseOwner == ""
		})
		if kids := h.children(run); len(kids) != 2 {
			t.Errorf("%d children after the cancel, want the 2 it had started", len(kids))
		}
	})
}

// An Archon fan-out whose children would share the live checkout and may write to it is refused
// before any child starts, as Archon refuses it.
func TestArchonFanOutRefusesChildrenWritingOneLiveCheckout(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		h.withArchon(map[string]string{
			"workflows/live.yaml":   "name: live\ndescription: d\nworktree:\n  enabled: false\nnodes:\n  - id: w\n    bash: echo hi\n",
			"workflows/spread.yaml": "name: spread\ndescription: d\nnodes:\n  - id: each\n    workflow: live\n    fan_out:\n      items: '[\"a\", \"b\"]'\n",
		})
		run := h.waitStatus(h.startRun("spread", "").ID, db.StatusFailed)
		if le := run.Meta.LastError; le == nil || !strings.Contains(le.Message, "up to 2 children of live would run at once in the live checkout") {
			t.Fatalf("last error = %+v", run.Meta.LastError)
		}
		if kids := h.children(run); len(kids) != 0 {
			t.Errorf("%d children started", len(kids))
		}
	})
}

// A fan-out that failed under all_success is resumed by `/workflow resume PARENT`: the failed child
// is resumed (no other child is started), the completed ones are kept, and the node completes.
func TestResumingAFanOutResumesItsFailedChildren(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		flag := filepath.Join(t.TempDir(), "flag")
		h.writeWorkflow("child", "name: child\nnodes:\n  - id: check\n    bash: 'if [ \"$ARGUMENTS\" = b ]; then cat "+flag+"; else echo \"ok $ARGUMENTS\"; fi'\n")
		h.writeWorkflow("spread", "name: spread\nnodes:\n  - id: each\n    workflow: child\n    fan_out:\n      items: '[\"a\", \"b\"]'\n      join: all_success\n")
		run := h.waitStatus(h.startRun("spread", "").ID, db.StatusFailed)
		if le := run.Meta.LastError; le == nil || le.Node != "each" || !strings.Contains(le.Message, "item 1's child run "+db.ChildRunID(run.ID, "each", 1)) {
			t.Fatalf("last error = %+v", run.Meta.LastError)
		}
		if err := os.WriteFile(flag, []byte("fixed"), 0o600); err != nil {
			t.Fatal(err)
		}
		h.say(admin, "", "/workflow resume "+run.ID)
		run = h.waitCompleted(run.ID)
		if got := nodeOutput(t, h.events(run.ID), "each"); got != `["ok a","fixed"]` {
			t.Errorf("each's output = %s", got)
		}
		h.checkChildren(run, "each", db.StatusCompleted, db.StatusCompleted)
		if a := h.children(run); a[0].Attempt+a[1].Attempt != 1 {
			t.Errorf("children's attempts = %d and %d; want the failed one resumed once, the other not", a[0].Attempt, a[1].Attempt)
		}
	})
}
