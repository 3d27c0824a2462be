package orchestrator_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"threadflow/db"
	"threadflow/orchestrator/execution"
	"threadflow/testkit/runevents"
)

// appendWorkflow appends its attempt to a file in its first node and prints the file in its second:
// the output shows which attempts of the first node the final workspace holds.
const appendWorkflow = "name: notes\nnodes:\n  - id: write\n    bash: echo \"write attempt $ATTEMPT\" >> notes.txt\n" +
	"  - id: read\n    depends_on: [write]\n    bash: cat notes.txt\n"

// afterHostADied runs f, in parallel with other tests, on each engine with a harness whose engine, on
// host b, shares WORKSPACE_REMOTE remote with a host a that died while it ran run, a run of notes:
// the run is left (by diedOnHostA, with saved) as a killed worker on a leaves it, and f starts the
// engine (h.start) to take it over once the dead worker's lease has expired.
func afterHostADied(t *testing.T, saved bool, f func(t *testing.T, h *harness, remote string, run db.Run)) {
	eachEngine(t, func(t *testing.T, h *harness) {
		remote := newRepo(t, true)
		h.shutdown()
		h.cfg.Dirs = execution.Dirs{Home: h.home, Remote: remote, Token: "home-b-0123456789", Host: "host-b"}
		h.writeWorkflow("notes", appendWorkflow)
		h.start()
		h.shutdown() // the run is created while no worker runs, so the dead worker claims it
		run := h.startRun("notes", "")
		diedOnHostA(t, h, run, remote, saved)
		f(t, h, remote, run)
	})
}

// diedOnHostA leaves run as a worker on host a (its own THREADFLOW_HOME, the same remote) that was
// killed during the node write leaves it: claimed under a lease that has expired, its workspace
// made in a's home, write started (attempt 1) and its file written. With saved, write also
// completed, its save pushed first as the executor does, and read started.
// resumeFresh resumes the run with --fresh-workspace, which must answer that it starts again.
func resumeFresh(t *testing.T, h *harness, id string) {
	t.Helper()
	if text := joined(h.say(admin, "", "/workflow resume "+id+" --fresh-workspace")); !strings.Contains(text, "from its first node in a fresh workspace") {
		t.Fatalf("--fresh-workspace of run %s answered:\n%s", id, text)
	}
}

// waitFreshAttempt waits for the run to end, failing unless it completed with the output of the
// second attempt of its write node alone: the one in the fresh workspace (on host b).
func waitFreshAttempt(t *testing.T, h *harness, id string) db.Run {
	t.Helper()
	run := h.waitStatus(id, db.StatusCompleted, db.StatusPaused, db.StatusFailed)
	if run.Status != db.StatusCompleted || strings.TrimSpace(run.Meta.Output) != "write attempt 2" {
		t.Fatalf("run is %s with output %q, want completed with only the fresh attempt of write; messages:\n%s", run.Status, run.Meta.Output, h.out.Dump())
	}
	return run
}

func diedOnHostA(t *testing.T, h *harness, run db.Run, remote string, saved bool) {
	t.Helper()
	ctx := context.Background()
	dead, err := h.store.ClaimRun(ctx, "worker-a", time.Millisecond, db.Reach{})
	if err != nil || dead.ID != run.ID {
		t.Fatalf("claim = %v, %v", dead.ID, err)
	}
	a := execution.Dirs{Home: t.TempDir(), Remote: remote, Token: "home-a-0123456789", Host: "host-a"}
	w, err := a.Make(ctx, run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.store.SetWorkspace(ctx, dead.Lease(), w); err != nil {
		t.Fatal(err)
	}
	record := func(typ db.EventType, node string) {
		t.Helper()
		if _, err := h.store.RecordEvent(ctx, dead.Lease(), db.Event{RunID: run.ID, Type: typ, NodeID: node, Attempt: 1, Data: []byte(`{}`)}); err != nil {
			t.Fatal(err)
		}
	}
	record(db.EventNodeStarted, "write")
	if err := os.WriteFile(filepath.Join(w.Path, "notes.txt"), []byte("write attempt 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if saved {
		if err := a.Save(ctx, run.ID, w.Path, "threadflow: run "+run.ID+", node write (attempt 1) completed"); err != nil {
			t.Fatal(err)
		}
		record(db.EventNodeCompleted, "write")
		record(db.EventNodeStarted, "read")
	}
}

// branchLog is the subjects of the commits of the run's branch on the remote, newest first.
func branchLog(t *testing.T, remote, runID string) string {
	t.Helper()
	return git(t, remote, "log", "--format=%s", "threadflow/"+runID)
}

// Host a died during the run's first node, before anything reached the remote: b finds no branch
// and no save recorded, and starts the run again from its first node in a fresh workspace, saying
// so in the thread. Nobody is asked; nothing of a's workspace is in b's.
func TestWorkspaceThatNeverReachedTheRemoteStartsAfresh(t *testing.T) {
	afterHostADied(t, false, func(t *testing.T, h *harness, remote string, run db.Run) {
		h.start()

		run = waitFreshAttempt(t, h, run.ID)
		note := h.waitMessage("never reached WORKSPACE_REMOTE")
		want := "↻ The workspace of run " + run.ID + " on host host-a never reached WORKSPACE_REMOTE (no node had completed in it), " +
			"so the run starts again from its first node in a fresh workspace: write runs again."
		if len(note) != 1 || note[0].Text != want {
			t.Errorf("the thread's note:\n%+v\nwant once:\n%s", note, want)
		}
		if paused := h.out.Find("paused"); len(paused) != 0 {
			t.Errorf("the run paused on its way: %+v", paused)
		}
		var made []db.Workspace
		for _, e := range h.events(run.ID) {
			if e.Type == db.EventWorkspace {
				made = append(made, db.Decode[db.Workspace](e))
			}
		}
		if len(made) != 2 || !made[1].Replaced || made[1].Recreated || made[1].Home != "home-b-0123456789" || made[1].Remote != remote {
			t.Errorf("workspace_created events: %+v; want a's, then b's fresh one replacing it", made)
		}
		var history []string
		for _, l := range execution.Fold(h.events(run.ID)).Log {
			history = append(history, l.What+" ("+l.Note+")")
		}
		if want := "workspace made afresh: the one before never reached " + remote + " (host-b: " + run.WorkingPath + ")"; !slices.Contains(history, want) {
			t.Errorf("the run's history (the dashboard's) lacks %q:\n%s", want, strings.Join(history, "\n"))
		}
		if got := branchLog(t, remote, run.ID); got != "threadflow: run "+run.ID+", node read (attempt 1) completed\n"+
			"threadflow: run "+run.ID+", node write (attempt 2) completed" {
			t.Errorf("the remote's branch:\n%s\nwant b's two saves only", got)
		}
	})
}

// A remote that does not answer decides nothing: the run pauses naming the remote and
// reachability (not this host's disk), a plain resume tries again, and --fresh-workspace is
// accepted. Once the remote is back, the fresh workspace's branch continues the one a pushed, so
// its saves are fast-forwards and a's history stays.
func TestUnreachableRemotePausesAndAllowsAFreshWorkspace(t *testing.T) {
	afterHostADied(t, true, func(t *testing.T, h *harness, remote string, run db.Run) {
		aSaved := git(t, remote, "rev-parse", "threadflow/"+run.ID)
		away := remote + ".away"
		if err := os.Rename(remote, away); err != nil {
			t.Fatal(err)
		}
		h.start()

		run = h.waitStatus(run.ID, db.StatusPaused, db.StatusCompleted, db.StatusFailed)
		p := run.Meta.Pause
		if run.Status != db.StatusPaused || p == nil || !p.WorkspaceUnreachable || p.WorkspaceLost {
			t.Fatalf("run is %s with pause %+v; want paused with an unreachable remote; messages:\n%s", run.Status, p, h.out.Dump())
		}
		for _, want := range []string{"the workspace of run " + run.ID + " cannot be recreated: WORKSPACE_REMOTE " + remote +
			" cannot be read from this host: git ls-remote: ", "does not appear to be a git repository"} {
			if !strings.Contains(p.Error, want) {
				t.Errorf("pause error lacks %q: %s", want, p.Error)
			}
		}
		if want := "make WORKSPACE_REMOTE " + remote + " reachable from this host, then /workflow resume " + run.ID; p.ResumeHint != want {
			t.Errorf("hint = %q, want %q", p.ResumeHint, want)
		}
		if strings.Contains(p.ResumeHint, "THREADFLOW_HOME") {
			t.Errorf("the hint blames this host's disk: %s", p.ResumeHint)
		}
		notice := h.waitMessage("tries the remote again")
		if last := notice[len(notice)-1]; len(last.Buttons) != 3 || last.Buttons[0].Command != "/workflow resume "+run.ID ||
			last.Buttons[1].Command != "/workflow resume "+run.ID+" --fresh-workspace" {
			t.Errorf("the thread's pause notice: %q, buttons %+v", last.Text, last.Buttons)
		}

		text := joined(h.say(admin, "", "/workflow resume "+run.ID))
		if !strings.Contains(text, "where it stopped") {
			t.Fatalf("plain resume reply:\n%s", text)
		}
		h.waitFor("the plain resume to pause again", func() bool {
			got, err := h.store.GetRun(context.Background(), run.ID)
			return err == nil && got.Status == db.StatusPaused && got.Attempt > run.Attempt
		})

		if err := os.Rename(away, remote); err != nil {
			t.Fatal(err)
		}
		resumeFresh(t, h, run.ID)
		run = waitFreshAttempt(t, h, run.ID)
		if out, err := exec.Command("git", "-C", remote, "merge-base", "--is-ancestor", aSaved, "threadflow/"+run.ID).CombinedOutput(); err != nil {
			t.Errorf("a's save is no longer in the branch's history: %v %s\n%s", err, out, branchLog(t, remote, run.ID))
		}
	})
}

// A node's save reached the remote, and then the run's branch was deleted there: the workspace is
// lost, and the pause names the branch rather than a host. A plain resume is refused;
// --fresh-workspace runs the workflow again from its first node.
func TestDeletedBranchIsALostWorkspace(t *testing.T) {
	afterHostADied(t, true, func(t *testing.T, h *harness, remote string, run db.Run) {
		git(t, remote, "update-ref", "-d", "refs/heads/threadflow/"+run.ID)
		h.start()

		run = h.waitStatus(run.ID, db.StatusPaused, db.StatusCompleted, db.StatusFailed)
		want := "the workspace of run " + run.ID + " is lost: node write's changes were pushed to branch threadflow/" + run.ID +
			" on WORKSPACE_REMOTE " + remote + ", and that branch is not there any more (deleted, or the remote was replaced)"
		if p := run.Meta.Pause; run.Status != db.StatusPaused || p == nil || !p.WorkspaceLost || p.Error != want {
			t.Fatalf("run is %s with pause %+v; want lost:\n%s\nmessages:\n%s", run.Status, p, want, h.out.Dump())
		}
		h.waitMessage("its workspace is lost")

		text := joined(h.say(admin, "", "/workflow resume "+run.ID))
		if !strings.Contains(text, "cannot continue where it stopped: "+want) {
			t.Fatalf("plain resume of a run whose branch is gone:\n%s", text)
		}
		resumeFresh(t, h, run.ID)
		run = waitFreshAttempt(t, h, run.ID)
	})
}

// Runs kept on WORKSPACE_REMOTE move between replicas at every gate, not only when one dies. A run
// paused at its first node, a gate, on host a and approved while host b holds it finds nothing on
// the remote: b starts it in a fresh workspace, and the answer stands (the gate is not asked again).
func TestAnsweredFirstGateStandsInAFreshWorkspace(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		remote := newRepo(t, true)
		h.shutdown()
		h.cfg.Dirs = execution.Dirs{Home: t.TempDir(), Remote: remote, Token: "home-a-0123456789", Host: "host-a"}
		h.writeWorkflow("gated", "name: gated\nnodes:\n  - id: ask\n    approval: {message: \"go?\"}\n"+
			"  - id: write\n    depends_on: [ask]\n    bash: echo \"written\" >> notes.txt; cat notes.txt\n")
		h.start()
		run := h.waitStatus(h.startRun("gated", "").ID, db.StatusPaused)
		h.shutdown()
		h.cfg.Dirs = execution.Dirs{Home: h.home, Remote: remote, Token: "home-b-0123456789", Host: "host-b"}
		h.start()

		h.say(admin, "", "/workflow approve "+run.ID)
		run = h.waitStatus(run.ID, db.StatusCompleted, db.StatusPaused, db.StatusFailed)
		if run.Status != db.StatusCompleted || strings.TrimSpace(run.Meta.Output) != "written" {
			t.Fatalf("run is %s with output %q, want completed; messages:\n%s", run.Status, run.Meta.Output, h.out.Dump())
		}
		want := "↻ The workspace of run " + run.ID + " on host host-a never reached WORKSPACE_REMOTE (no node had completed in it), " +
			"so the run starts again from its first node in a fresh workspace."
		if note := h.waitMessage("never reached WORKSPACE_REMOTE"); len(note) != 1 || note[0].Text != want {
			t.Errorf("the thread's note:\n%+v\nwant once:\n%s", note, want)
		}
		if n := runevents.Count(h.events(run.ID), db.EventGateRequested, "ask"); n != 1 {
			t.Errorf("the gate was asked %d times, want once", n)
		}
	})
}

// A node whose work finished but whose save the remote refused is not completed: it failed (the
// run pauses blaming the remote), and nothing reached the remote. Resumed once host a is gone, the
// run starts again in a fresh workspace on b, where the node runs again and its save is pushed.
func TestNodeWhosePushFailedRunsAgainInAFreshWorkspace(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		remote := newRepo(t, true)
		hook := filepath.Join(remote, "hooks", "pre-receive")
		if err := os.WriteFile(hook, []byte("#!/bin/sh\necho refused by the test >&2\nexit 1\n"), 0o755); err != nil {
			t.Fatal(err)
		}
		h.shutdown()
		h.cfg.Dirs = execution.Dirs{Home: t.TempDir(), Remote: remote, Token: "home-a-0123456789", Host: "host-a"}
		h.writeWorkflow("notes", appendWorkflow)
		h.start()
		run := h.waitStatus(h.startRun("notes", "").ID, db.StatusPaused, db.StatusFailed, db.StatusCompleted)
		if p := run.Meta.Pause; run.Status != db.StatusPaused || p == nil || !strings.Contains(p.Error, "refused by the test") ||
			!strings.Contains(p.ResumeHint, "make WORKSPACE_REMOTE reachable and writable") {
			t.Fatalf("run is %s with pause %+v; want paused blaming the remote; messages:\n%s", run.Status, p, h.out.Dump())
		}
		if n := runevents.Count(h.events(run.ID), db.EventNodeCompleted, ""); n != 0 {
			t.Fatalf("%d nodes recorded completed although nothing was pushed", n)
		}
		h.shutdown() // host a is gone for good
		if err := os.Remove(hook); err != nil {
			t.Fatal(err)
		}
		h.cfg.Dirs = execution.Dirs{Home: h.home, Remote: remote, Token: "home-b-0123456789", Host: "host-b"}
		h.start()

		h.say(admin, "", "/workflow resume "+run.ID)
		run = waitFreshAttempt(t, h, run.ID)
		h.waitMessage("never reached WORKSPACE_REMOTE (no node had completed in it), so the run starts again from its first node in a fresh workspace: write runs again.")
	})
}
