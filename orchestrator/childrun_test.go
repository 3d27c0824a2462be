package orchestrator_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"threadflow/db"
	"threadflow/orchestratortest"
)

// parentWF starts a child run of `child` and reads its output downstream.
const parentWF = `name: parent
nodes:
  - id: sub
    workflow: child
  - id: after
    depends_on: [sub]
    bash: echo "parent read= $sub.output"
`

// children are the child runs of parent, each checked to name it.
func (h *harness) children(parent db.Run) []db.Run {
	h.t.Helper()
	kids, err := h.store.ListRuns(context.Background(), db.RunFilter{ParentRunID: parent.ID})
	if err != nil {
		h.t.Fatal(err)
	}
	for _, k := range kids {
		if k.ParentRunID != parent.ID || k.UserID != parent.UserID {
			h.t.Fatalf("child %s: parent %q requester %s, want %s's child with its requester %s", k.ID, k.ParentRunID, k.UserID, parent.ID, parent.UserID)
		}
	}
	return kids
}

// TestChildRunCompletesItsParentWithItsOutput: a `workflow:` node starts one real run of the named
// workflow, with the parent's arguments, in the parent's thread; the child's output is the node's.
func TestChildRunCompletesItsParentWithItsOutput(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		h.writeWorkflow("child", "name: child\nnodes:\n  - id: say\n    bash: echo \"child of $ARGUMENTS\"\n")
		h.writeWorkflow("parent", parentWF)
		run := h.waitCompleted(h.startRun("parent", "the ask").ID)
		kids := h.children(run)
		if len(kids) != 1 || kids[0].ID != db.ChildRunID(run.ID, "sub", -1) || kids[0].Status != db.StatusCompleted || kids[0].ParentNode != "sub" {
			t.Fatalf("children of %s = %+v; want one completed run %s started by node sub", run.ID, kids, db.ChildRunID(run.ID, "sub", -1))
		}
		got := completedOutputs(h.events(run.ID))
		if got["sub"] != "child of the ask" || got["after"] != "parent read= child of the ask" {
			t.Fatalf("parent's outputs = %q; want the child's output as sub's", got)
		}
	})
}

// TestFailedChildFailsItsParentAndResumeResumesIt: a child that fails fails its parent's node and
// so the parent; nothing resumes either by itself; `/workflow resume PARENT` resumes the failed
// child (no second child is started) and both complete.
func TestFailedChildFailsItsParentAndResumeResumesIt(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		flag := filepath.Join(t.TempDir(), "flag")
		h.writeWorkflow("child", "name: child\nnodes:\n  - id: check\n    bash: cat "+flag+"\n")
		h.writeWorkflow("parent", parentWF)
		run := h.waitStatus(h.startRun("parent", "").ID, db.StatusFailed)
		kids := h.children(run)
		if len(kids) != 1 || kids[0].Status != db.StatusFailed {
			t.Fatalf("children after the failure = %+v; want one failed child", kids)
		}
		if le := run.Meta.LastError; le == nil || le.Node != "sub" || !strings.Contains(le.Message, kids[0].ID) {
			t.Fatalf("parent's error = %+v; want node sub naming child %s", le, kids[0].ID)
		}
		if err := os.WriteFile(flag, []byte("fixed"), 0o600); err != nil {
			t.Fatal(err)
		}
		h.say(admin, "", "/workflow resume "+run.ID)
		run = h.waitCompleted(run.ID)
		kids = h.children(run)
		if len(kids) != 1 || kids[0].Status != db.StatusCompleted || kids[0].Attempt != 1 {
			t.Fatalf("children after the resume = %+v; want the same child, resumed once and completed", kids)
		}
		if got := completedOutputs(h.events(run.ID))["after"]; got != "parent read= fixed" {
			t.Fatalf("after printed %q", got)
		}
	})
}

// TestCancellingAParentCancelsItsChild: the cascade is the store's (one transaction); the child's
// worker stops its process, and the parent's stops waiting.
func TestCancellingAParentCancelsItsChild(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		h.writeWorkflow("child", "name: child\nnodes:\n  - id: wait\n    bash: sleep 60\n")
		h.writeWorkflow("parent", parentWF)
		run := h.startRun("parent", "")
		child := db.ChildRunID(run.ID, "sub", -1)
		h.waitFor("the child to run", func() bool {
			c, err := h.store.GetRun(context.Background(), child)
			return err == nil && c.Status == db.StatusRunning
		})
		if _, err := h.store.CancelRun(context.Background(), run.ID, db.Actor{ID: admin}, "not needed"); err != nil {
			t.Fatal(err)
		}
		h.waitStatus(child, db.StatusCancelled)
		if r := h.waitStatus(run.ID, db.StatusCancelled); r.LeaseOwner != "" {
			t.Fatalf("cancelled parent still leased by %s", r.LeaseOwner)
		}
	})
}

// TestChildRunInputIsItsArguments: `input` (with the parent's variables expanded) is the child's
// $ARGUMENTS.
func TestChildRunInputIsItsArguments(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		h.writeWorkflow("child", "name: child\nnodes:\n  - id: say\n    bash: echo \"child of $ARGUMENTS\"\n")
		h.writeWorkflow("parent", "name: parent\nnodes:\n  - id: first\n    bash: echo one\n  - id: sub\n    depends_on: [first]\n    workflow: child\n    input: \"$first.output and $ARGUMENTS\"\n")
		run := h.waitCompleted(h.startRun("parent", "two").ID)
		if got := completedOutputs(h.events(run.ID))["sub"]; got != "child of one and two" {
			t.Fatalf("sub's output = %q, want the child's echo of its input", got)
		}
	})
}

// childLine is the one message of a child run in its parent's thread (its nested line), failing
// unless there is exactly one, in the parent's thread.
func (h *harness) childLine(parent db.Run, child string) orchestratortest.Posted {
	h.t.Helper()
	lines := h.out.Find("↳ child run " + child + " (workflow child, node sub): ")
	thread := runThread(h.t, h, parent.ID)
	if len(lines) != 1 || lines[0].To.ThreadID != thread {
		h.t.Fatalf("child %s has %d lines, want one in its parent's thread %s; messages:\n%s", child, len(lines), thread, h.out.Dump())
	}
	return lines[0]
}

// noOwnFlow checks that a child run was not reported as a run of its own: no announcement, no
// status message, no end message.
func (h *harness) noOwnFlow(child string) {
	h.t.Helper()
	for _, s := range []string{"▶ child - run", "Status of run " + child, "Run " + child + " of child completed", "Run " + child + " of child failed", "Run " + child + " of child was cancelled"} {
		if got := h.out.Find(s); len(got) != 0 {
			h.t.Fatalf("the child was reported as a run of its own (%q):\n%s", s, h.out.Dump())
		}
	}
}

// TestChildRunIsOneLineInItsParentsThread: a child run shows as one line in its parent's thread,
// edited in place as it runs and ends, not as a run of its own; its gate question is asked in the
// parent's thread, marked as the child's, and a reply there answers it.
func TestChildRunIsOneLineInItsParentsThread(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		h.writeWorkflow("child", "name: child\nnodes:\n  - id: say\n    bash: echo \"child of $ARGUMENTS\"\n  - id: ok\n    depends_on: [say]\n    approval:\n      message: Fine?\n")
		h.writeWorkflow("parent", parentWF)
		run := h.startRun("parent", "the ask")
		child := db.ChildRunID(run.ID, "sub", -1)
		thread := runThread(t, h, run.ID)
		gate := h.waitMessage("Fine?")[0]
		if gate.To.ThreadID != thread || !strings.HasPrefix(gate.Text, "↳ child run "+child+" of run "+run.ID+" (node sub):\n⏸ Run "+child+" is waiting at ok.") || len(gate.Buttons) == 0 {
			t.Fatalf("the child's gate question = %q in thread %q with %d buttons; want it in the parent's thread %s, marked as the child's, with its buttons", gate.Text, gate.To.ThreadID, len(gate.Buttons), thread)
		}
		h.waitFor("the child's line to show its gate", func() bool {
			return strings.HasSuffix(h.childLine(run, child).Text, ": paused · ✓ say · ⏸ ok")
		})
		h.say(ops, thread, "lgtm")
		h.waitCompleted(run.ID)
		h.delivered()
		if line := h.childLine(run, child); line.Text != "↳ child run "+child+" (workflow child, node sub): completed · ✓ say · ✓ ok" || !line.Edited {
			t.Fatalf("the child's line = %q (edited %v); want it edited in place to completed", line.Text, line.Edited)
		}
		h.noOwnFlow(child)
		if len(h.out.Find("Run "+run.ID+" of parent completed.")) != 1 {
			t.Fatalf("the parent's end is not reported:\n%s", h.out.Dump())
		}
	})
}

// TestFailedChildLineAndResume: a failed child's line says where it failed, the parent's failure
// says why and how to resume; the resume of the parent edits the same line until it completes.
func TestFailedChildLineAndResume(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		flag := filepath.Join(t.TempDir(), "flag")
		h.writeWorkflow("child", "name: child\nnodes:\n  - id: check\n    bash: cat "+flag+"\n")
		h.writeWorkflow("parent", parentWF)
		run := h.waitStatus(h.startRun("parent", "").ID, db.StatusFailed)
		child := db.ChildRunID(run.ID, "sub", -1)
		h.delivered()
		if line := h.childLine(run, child); !strings.HasPrefix(line.Text, "↳ child run "+child+" (workflow child, node sub): failed at check") {
			t.Fatalf("the failed child's line = %q", line.Text)
		}
		if f := h.out.Find("❌ Run " + run.ID + " of parent failed at node sub"); len(f) != 1 || !strings.Contains(f[0].Text, child) {
			t.Fatalf("the parent's failure does not name its child:\n%s", h.out.Dump())
		}
		if err := os.WriteFile(flag, []byte("fixed"), 0o600); err != nil {
			t.Fatal(err)
		}
		h.say(admin, "", "/workflow resume "+run.ID)
		h.waitCompleted(run.ID)
		h.delivered()
		if line := h.childLine(run, child); line.Text != "↳ child run "+child+" (workflow child, node sub): completed · ✓ check" {
			t.Fatalf("the resumed child's line = %q, want it completed", line.Text)
		}
		h.noOwnFlow(child)
	})
}

// gatedParentWF starts a child that fails (the node may fail), then asks a gate: a parent that
// reaches a gate with a child it did not finish.
const gatedParentWF = `name: parent
nodes:
  - id: sub
    workflow: child
    continue_on_error: true
  - id: confirm
    depends_on: [sub]
    trigger_rule: all_done
    approval:
      message: Go on without the child?
`

// TestRejectingOrTimingOutAParentCancelsItsChild: a rejection (a reply in the thread) or a gate's
// timeout that ends a parent cancels the child it left failed, as a cancel does, and the child's
// line in the thread says so.
func TestRejectingOrTimingOutAParentCancelsItsChild(t *testing.T) {
	for _, c := range []struct{ name, gate string }{{"rejected", ""}, {"timed out", "      timeout: 1s\n      on_timeout: abandon\n"}} {
		t.Run(c.name, func(t *testing.T) {
			eachEngine(t, func(t *testing.T, h *harness) {
				h.writeWorkflow("child", "name: child\nnodes:\n  - id: check\n    bash: exit 3\n")
				h.writeWorkflow("parent", gatedParentWF+c.gate)
				run := h.startRun("parent", "")
				child := db.ChildRunID(run.ID, "sub", -1)
				h.waitMessage("Go on without the child?")
				if k := h.waitStatus(child, db.StatusFailed); k.ParentRunID != run.ID {
					t.Fatalf("child %s names parent %q", k.ID, k.ParentRunID)
				}
				if c.gate == "" {
					h.say(ops, runThread(t, h, run.ID), "no, not without it")
				}
				h.waitStatus(run.ID, db.StatusCancelled)
				if k := h.waitStatus(child, db.StatusCancelled); k.LeaseOwner != "" {
					t.Fatalf("cancelled child still leased by %s", k.LeaseOwner)
				}
				h.delivered()
				if line := h.childLine(run, child); !strings.HasPrefix(line.Text, "↳ child run "+child+" (workflow child, node sub): cancelled") {
					t.Fatalf("the cancelled child's line = %q", line.Text)
				}
				h.noOwnFlow(child)
			})
		})
	}
}

// TestParentWaitingForItsChildLendsItsSlot: with one worker slot, a parent waiting for its child
// frees the slot while it waits, so the child runs and both complete (holding it, the parent
// would wait forever for a child that no slot is left for).
func TestParentWaitingForItsChildLendsItsSlot(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		h.cfg.Slots = 1
		h.restart()
		h.writeWorkflow("child", "name: child\nnodes:\n  - id: say\n    bash: echo \"child of $ARGUMENTS\"\n")
		h.writeWorkflow("parent", parentWF)
		run := h.waitCompleted(h.startRun("parent", "one slot").ID)
		if got := completedOutputs(h.events(run.ID))["after"]; got != "parent read= child of one slot" {
			t.Fatalf("after printed %q", got)
		}
	})
}

// TestFanOutParentLendsItsSlot: with one worker slot, a fan_out parent waiting for its children
// frees the slot, so they run one after another and the parent completes; each child is one line
// in the parent's thread.
func TestFanOutParentLendsItsSlot(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		h.cfg.Slots = 1
		h.restart()
		h.writeWorkflow("child", "name: child\nnodes:\n  - id: say\n    bash: echo \"did $ARGUMENTS\"\n")
		h.writeWorkflow("spread", "name: spread\nnodes:\n  - id: sub\n    workflow: child\n    fan_out:\n      items: '[\"a\", \"b\"]'\n      max_parallel: 2\n")
		run := h.waitCompleted(h.startRun("spread", "").ID)
		h.delivered()
		for i := range 2 {
			h.childLine(run, db.ChildRunID(run.ID, "sub", i))
		}
	})
}
