package orchestrator_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"threadflow/db"
)

// The runs/ directory of the host that held a run's workspace is gone (a lost host, shared by this
// test's one process). The run does not fail at its next node: it pauses saying the workspace is
// lost; a plain resume says so and offers --fresh-workspace, which runs it again from its first
// node with the same arguments. --fresh-workspace is refused for a run that still has its files.
func TestLostWorkspaceResumesOnlyFresh(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		h.writeWorkflow("plan", "name: plan\nnodes:\n  - id: write\n    bash: echo \"$ARGUMENTS\" >> plan.txt\n"+
			"  - id: gate\n    depends_on: [write]\n    approval: {message: \"go?\"}\n"+
			"  - id: read\n    depends_on: [gate]\n    bash: cat plan.txt\n")
		run := h.startRun("plan", "the plan")
		run = h.waitStatus(run.ID, db.StatusPaused)

		text := joined(h.say(admin, "", "/workflow resume "+run.ID+" --fresh-workspace"))
		if !strings.Contains(text, "still has its workspace, so --fresh-workspace is not needed") || !strings.Contains(text, "Nothing else happened.") {
			t.Fatalf("--fresh-workspace for a run with its files:\n%s", text)
		}

		if err := os.RemoveAll(filepath.Join(h.home, "runs")); err != nil {
			t.Fatal(err)
		}
		h.say(admin, "", "/workflow approve "+run.ID)
		run = h.waitStatus(run.ID, db.StatusPaused, db.StatusFailed, db.StatusCompleted)
		if p := run.Meta.Pause; p == nil || !p.WorkspaceLost || !strings.Contains(p.Error, "the workspace of run "+run.ID+" is lost") {
			t.Fatalf("run after its workspace vanished: %s, pause %+v; messages:\n%s", run.Status, run.Meta.Pause, h.out.Dump())
		}

		lost := h.waitMessage("its workspace is lost")
		if last := lost[len(lost)-1]; !strings.Contains(last.Text, "/workflow resume "+run.ID+" --fresh-workspace runs it again") ||
			len(last.Buttons) != 2 || last.Buttons[0].Command != "/workflow resume "+run.ID+" --fresh-workspace" {
			t.Errorf("the thread's notice of the lost workspace: %q, buttons %+v", last.Text, last.Buttons)
		}

		text = joined(h.say(admin, "", "/workflow resume "+run.ID))
		for _, want := range []string{"cannot continue where it stopped", "is lost", "/workflow resume " + run.ID + " --fresh-workspace", "/workflow abandon " + run.ID} {
			if !strings.Contains(text, want) {
				t.Errorf("plain resume of a lost workspace lacks %q:\n%s", want, text)
			}
		}
		if got := h.waitStatus(run.ID, db.StatusPaused); got.Attempt != run.Attempt {
			t.Fatalf("the refused resume changed the run: attempt %d -> %d", run.Attempt, got.Attempt)
		}

		resumeFresh(t, h, run.ID)
		run = h.waitStatus(run.ID, db.StatusPaused) // the gate asks again: every node runs again
		h.say(admin, "", "/workflow approve "+run.ID)
		run = h.waitStatus(run.ID, db.StatusCompleted, db.StatusFailed)
		if run.Status != db.StatusCompleted || strings.TrimSpace(run.Meta.Output) != "the plan" {
			t.Fatalf("fresh run: %s with output %q (want the arguments written once, by the first node run again); messages:\n%s",
				run.Status, run.Meta.Output, h.out.Dump())
		}
		var fresh, starts int
		for _, e := range h.events(run.ID) {
			if e.Type == db.EventResumeRequested && db.Decode[db.ResumeRequestedData](e).FreshWorkspace {
				fresh++
			}
			if e.Type == db.EventNodeStarted && e.NodeID == "write" {
				starts++
			}
		}
		if fresh != 1 || starts != 2 {
			t.Errorf("events: %d fresh resumes, write started %d times; want 1 and 2", fresh, starts)
		}
	})
}
