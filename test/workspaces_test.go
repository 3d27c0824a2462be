package test

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"threadflow/db"
	"threadflow/db/dbtest"
	"threadflow/testkit"
	"threadflow/testkit/botproc"
)

// handoverWorkflow writes a file in its first node, asks a person, and reads the file in its last
// node. On replica a (WHO=a) the last node hangs, so the test can kill a while it holds the run.
const handoverWorkflow = `
name: handover
nodes:
  - id: write
    bash: 'echo "written by $WHO" > notes.txt'
  - id: gate
    depends_on: [write]
    approval: {message: "go on?"}
  - id: read
    depends_on: [gate]
    bash: 'if [ "$WHO" = a ]; then sleep 600; fi; cat notes.txt'
`

// remoteWorkflow writes a file in its first node and reads it in its second, which hangs on
// replica a (WHO=a).
const remoteWorkflow = `
name: handover
nodes:
  - id: write
    bash: 'echo "written by $WHO" > notes.txt'
  - id: read
    depends_on: [write]
    bash: 'if [ "$WHO" = a ]; then sleep 600; fi; cat notes.txt'
`

// twoReplicas are the environments of replicas a and b: one PostgreSQL database, a THREADFLOW_HOME
// each (separate hosts), short leases so a killed replica's runs are rescued within the test.
func twoReplicas(t *testing.T) (a, b map[string]string) {
	t.Helper()
	dbURL := dbtest.PostgresDatabase(t)
	a, b = botproc.Env(t), botproc.Env(t)
	for who, env := range map[string]map[string]string{"a": a, "b": b} {
		env["DATABASE_URL"], env["LEASE_TTL"], env["REPLICA_ID"], env["WHO"] = dbURL, "1s", who, who
	}
	return a, b
}

// bareRepo is a local bare git repository, the WORKSPACE_REMOTE of the tests.
func bareRepo(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", "--bare", dir).CombinedOutput(); err != nil {
		testkit.Missing(t, "git is not usable: %v %s", err, out)
	}
	return dir
}

// nodeStarted waits until node of the run has started.
func nodeStarted(t *testing.T, st db.Store, id, node string) {
	t.Helper()
	testkit.EventuallyWithin(t, testkit.Deadline, "node "+node+" of run "+id+" to start", func() bool {
		events, err := st.Events(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range events {
			if e.Type == db.EventNodeStarted && e.NodeID == node {
				return true
			}
		}
		return false
	})
}

// onlyRun waits for the one run of the database and returns its id.
func onlyRun(t *testing.T, st db.Store) string {
	t.Helper()
	var id string
	testkit.EventuallyWithin(t, testkit.Deadline, "the run to be created", func() bool {
		runs, err := st.ListRuns(context.Background(), db.RunFilter{})
		if err != nil {
			t.Fatal(err)
		}
		if len(runs) == 1 {
			id = runs[0].ID
		}
		return id != ""
	})
	return id
}

// claimers lists the owners of the run's claims, in order.
func claimers(t *testing.T, st db.Store, id string) []string {
	t.Helper()
	events, err := st.Events(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	var owners []string
	for _, e := range events {
		if e.Type == db.EventRunClaimed {
			owners = append(owners, db.Decode[db.RunClaimedData](e).Owner)
		}
	}
	return owners
}

// workflowCLI runs `bot workflow ARGS...` as a person on replica b's host would, and returns what
// it printed and its exit status.
func workflowCLI(t *testing.T, env map[string]string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*testkit.Deadline)
	defer cancel()
	cli := copyEnv(env)
	cli["REPLICA_ID"] = "cli-" + env["WHO"]
	cmd := botproc.CommandContext(ctx, t, cli, append([]string{"workflow"}, args...)...)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("bot workflow %v: %v", args, err)
	}
	return string(out), cmd.ProcessState.ExitCode()
}

// Acceptance (a) of issue 16: with WORKSPACE_REMOTE, a run Alice starts in replica a's web chat, a
// killed with SIGKILL, is continued by replica b (another THREADFLOW_HOME) in a workspace recreated
// from the remote, holding the file a's first node wrote; b's chat page shows the whole
// conversation, what a posted included.
func TestWorkspaceFollowsTheRunThroughTheRemote(t *testing.T) {
	t.Parallel()
	envA, envB := twoReplicas(t)
	remote := bareRepo(t)
	workflows := t.TempDir()
	if err := os.WriteFile(filepath.Join(workflows, "handover.yaml"), []byte(remoteWorkflow), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, env := range []map[string]string{envA, envB} {
		env["WORKSPACE_REMOTE"], env["WORKFLOWS_DIR"] = remote, workflows
	}
	st := openStore(t, envA)
	a := botproc.Start(t, envA)
	chatA := chatClient{t, a.URL(), "alice"}
	chatA.say("/workflow run handover")
	id := onlyRun(t, st)
	nodeStarted(t, st, id, "read") // write completed on a, and its files were pushed
	startedOnA := chatA.page()
	if !strings.Contains(startedOnA, id) {
		t.Fatalf("a's chat page does not name run %s:\n%s", id, startedOnA)
	}
	b := botproc.Start(t, envB)
	if got := b.LogEvents("serve.home_not_shared"); len(got) != 0 {
		t.Errorf("b warned about separate homes although WORKSPACE_REMOTE is set: %v", got)
	}
	if owners := claimers(t, st, id); strings.Join(owners, ",") != "a" {
		t.Fatalf("claims before the kill: %v, want a's only", owners)
	}
	a.Kill()

	waitAll(t, st, []string{id}, db.StatusCompleted)
	run, err := st.GetRun(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(run.Meta.Output) != "written by a" {
		t.Fatalf("the read node on b printed %q, want the file a's first node wrote", run.Meta.Output)
	}
	if !strings.HasPrefix(run.WorkingPath, envB["THREADFLOW_HOME"]) {
		t.Errorf("the run's workspace is %s, want one in b's THREADFLOW_HOME %s", run.WorkingPath, envB["THREADFLOW_HOME"])
	}
	events, _ := st.Events(context.Background(), id)
	var recreated []db.Workspace
	for _, e := range events {
		if w := db.Decode[db.Workspace](e); e.Type == db.EventWorkspace && w.Recreated {
			recreated = append(recreated, w)
		}
	}
	if len(recreated) != 1 || recreated[0].Remote != remote || recreated[0].Branch != "threadflow/"+id {
		t.Errorf("workspace_created events of the recreation: %+v", recreated)
	}
	// The run is completed in the database before b posts the end of it in the chat.
	onB := chatClient{t, b.URL(), "alice"}
	testkit.EventuallyWithin(t, testkit.Deadline, "the completion in the run's thread on b", func() bool {
		_, page := onB.thread()
		return strings.Contains(page, "of <code>handover</code> completed.")
	})
	chat := onB.page()
	_, page := onB.thread()
	for _, want := range []string{"▶ <code>handover</code> - run <code>" + id, "<strong>completed</strong>", "written by a"} {
		if !strings.Contains(page, want) {
			t.Errorf("the run's thread on b lacks %q (a posted the start, b the end):\n%s", want, page)
		}
	}
	if !strings.Contains(chat, "/workflow run handover") {
		t.Errorf("b's chat page lacks what alice typed on a:\n%s", chat)
	}
	if out, err := exec.Command("git", "-C", remote, "log", "--format=%s", "threadflow/"+id).CombinedOutput(); err != nil ||
		!strings.Contains(string(out), "node write (attempt 1) completed") || !strings.Contains(string(out), "node read") {
		t.Errorf("the remote's branch of the run: %v\n%s", err, out)
	}
}

// Acceptance (b) of issue 16: without a remote, b leaves a's run alone while a is alive (a run
// queued while both are up goes to a), says at start that it does not share a's home, and once a
// is gone for good the resume says the workspace is lost; --fresh-workspace completes the run.
func TestLostWorkspaceWithoutRemoteResumesFresh(t *testing.T) {
	t.Parallel()
	envA, envB := twoReplicas(t)
	st := openStore(t, envA)
	a := botproc.Start(t, envA)
	id := queueRuns(t, st, handoverWorkflow, 1)[0]
	waitAll(t, st, []string{id}, db.StatusPaused)
	b := botproc.Start(t, envB)
	b.WaitLog("serve.home_not_shared", nil)
	if p := b.LogEvents("serve.home_not_shared")[0]["problem"]; !strings.Contains(p.(string), "does not see the same THREADFLOW_HOME as a on") {
		t.Errorf("b's warning: %v", p)
	}

	botproc.ApproveOnDashboard(t, b.URL(), id, "bob", "go") // queued while both replicas are up: the run must go to a
	nodeStarted(t, st, id, "read")
	if owners := claimers(t, st, id); strings.Join(owners, ",") != "a,a" {
		t.Fatalf("claims while a is alive: %v, want a's only", owners)
	}

	a.Kill() // for good
	testkit.EventuallyWithin(t, 3*testkit.Deadline, "b to find the workspace lost", func() bool {
		run, err := st.GetRun(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		return run.Status == db.StatusPaused && run.Meta.Pause != nil && run.Meta.Pause.WorkspaceLost
	})

	out, code := workflowCLI(t, envB, "resume", id)
	for _, want := range []string{"cannot continue where it stopped", "the workspace of run " + id + " is lost", "/workflow resume " + id + " --fresh-workspace"} {
		if !strings.Contains(out, want) {
			t.Errorf("plain resume (exit %d) lacks %q:\n%s", code, want, out)
		}
	}
	out, code = workflowCLI(t, envB, "resume", id, "--fresh-workspace")
	if code != 3 || !strings.Contains(out, "from its first node in a fresh workspace") {
		t.Fatalf("resume --fresh-workspace = exit %d, want 3 (paused at the gate again):\n%s", code, out)
	}
	out, code = workflowCLI(t, envB, "approve", id)
	if code != 0 {
		t.Fatalf("approve after the fresh resume = exit %d, want 0 (completed):\n%s\nb's log:\n%s", code, out, b.Stderr())
	}
	run, err := st.GetRun(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if strings.TrimSpace(run.Meta.Output) != "written by b" {
		t.Errorf("the fresh run's output is %q, want the file b's first node wrote", run.Meta.Output)
	}
}

// firstNodeWorkflow appends to a file in its first node, then waits until the test lets it go (the
// file $RELEASE exists), and prints the file in its second.
const firstNodeWorkflow = `
name: firstkill
nodes:
  - id: write
    bash: 'echo "written by $WHO" >> notes.txt; until [ -e "$RELEASE" ]; do sleep 0.05; done'
  - id: read
    depends_on: [write]
    bash: 'cat notes.txt'
`

// Acceptance of issue 27 (Deliver 3): with WORKSPACE_REMOTE, replica a is killed with SIGKILL while
// the run's first node runs, before anything reached the remote. Replica b takes the run over once
// a's lease expired, finds the branch was never pushed and no node's save recorded, and starts the
// run again from its first node in a fresh workspace, saying so in the thread: the run completes
// without a person, with nothing of a's workspace in it.
func TestFirstNodeKillStartsAfreshWithoutAPerson(t *testing.T) {
	t.Parallel()
	envA, envB := twoReplicas(t)
	remote := bareRepo(t)
	workflows, release := t.TempDir(), filepath.Join(t.TempDir(), "release")
	if err := os.WriteFile(filepath.Join(workflows, "firstkill.yaml"), []byte(firstNodeWorkflow), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, env := range []map[string]string{envA, envB} {
		env["WORKSPACE_REMOTE"], env["WORKFLOWS_DIR"], env["RELEASE"] = remote, workflows, release
	}
	st := openStore(t, envA)
	a := botproc.Start(t, envA)
	chatA := chatClient{t, a.URL(), "alice"}
	chatA.say("/workflow run firstkill")
	id := onlyRun(t, st)
	nodeStarted(t, st, id, "write")
	workA := filepath.Join(envA["THREADFLOW_HOME"], "runs", id, "work")
	testkit.EventuallyWithin(t, testkit.Deadline, "a's first node to write its file", func() bool {
		b, err := os.ReadFile(filepath.Join(workA, "notes.txt"))
		return err == nil && strings.TrimSpace(string(b)) == "written by a"
	})
	a.Kill()
	if err := os.WriteFile(release, nil, 0o644); err != nil { // from now on the first node finishes at once
		t.Fatal(err)
	}

	b := botproc.Start(t, envB)
	var run db.Run
	testkit.EventuallyWithin(t, 3*testkit.Deadline, "b to finish the run", func() bool {
		var err error
		if run, err = st.GetRun(context.Background(), id); err != nil {
			t.Fatal(err)
		}
		return run.Status != db.StatusQueued && run.Status != db.StatusRunning
	})
	if run.Status != db.StatusCompleted {
		t.Fatalf("the run is %s (%+v), want completed without a person", run.Status, run.Meta.Pause)
	}
	if strings.TrimSpace(run.Meta.Output) != "written by b" {
		t.Fatalf("the run printed %q, want only what b's first node wrote in a fresh workspace", run.Meta.Output)
	}
	if !strings.HasPrefix(run.WorkingPath, envB["THREADFLOW_HOME"]) {
		t.Errorf("the run's workspace is %s, want one in b's THREADFLOW_HOME", run.WorkingPath)
	}
	events, _ := st.Events(context.Background(), id)
	var made []db.Workspace
	for _, e := range events {
		if e.Type == db.EventWorkspace {
			made = append(made, db.Decode[db.Workspace](e))
		}
	}
	if len(made) != 2 || made[1].Recreated || !made[1].Replaced || made[1].Home == made[0].Home || made[1].Remote != remote {
		t.Errorf("workspace_created events: %+v; want a's, then a fresh one of b replacing it", made)
	}
	onB := chatClient{t, b.URL(), "alice"}
	testkit.EventuallyWithin(t, testkit.Deadline, "the completion in the run's thread on b", func() bool {
		_, page := onB.thread()
		return strings.Contains(page, "of <code>firstkill</code> completed.")
	})
	_, page := onB.thread()
	for _, want := range []string{"never reached WORKSPACE_REMOTE", "starts again from its first node in a fresh workspace", "written by b"} {
		if !strings.Contains(page, want) {
			t.Errorf("the run's thread on b lacks %q:\n%s", want, page)
		}
	}
	if n := strings.Count(page, "never reached WORKSPACE_REMOTE"); n != 1 {
		t.Errorf("the thread says %d times that the workspace starts afresh, want once:\n%s", n, page)
	}
	if strings.Contains(page, "paused") {
		t.Errorf("the run paused on its way (it needs no person):\n%s", page)
	}
	if out, err := exec.Command("git", "-C", remote, "log", "--format=%s", "threadflow/"+id).CombinedOutput(); err != nil ||
		strings.Count(string(out), "completed") != 2 || !strings.Contains(string(out), "node write (attempt 2) completed") {
		t.Errorf("the remote's branch of the run (want b's two saves): %v\n%s", err, out)
	}
}
