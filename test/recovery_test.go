package test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"threadflow/agent/agenttest"
	"threadflow/db"
	"threadflow/db/postgres"
	"threadflow/db/sqlite"
	"threadflow/proctag"
	"threadflow/testkit"
	"threadflow/testkit/botproc"
	"threadflow/workflow"
)

// countingWorkflow is a chain of shell nodes; each appends "<run> <attempt>" to its own counter
// file, so the test can tell exactly which attempts of which node really executed.
func countingWorkflow(name string, nodes int, body string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\nnodes:\n", name)
	for i := 1; i <= nodes; i++ {
		fmt.Fprintf(&b, "  - id: n%d\n", i)
		if i > 1 {
			fmt.Fprintf(&b, "    depends_on: [n%d]\n", i-1)
		}
		fmt.Fprintf(&b, "    bash: 'echo \"$RUN_ID $ATTEMPT\" >> \"$COUNTERS/n%d\"; %s'\n", i, body)
	}
	return b.String()
}

// openStore opens the database a bot with env uses, from the test process.
func openStore(t *testing.T, env map[string]string) db.Store {
	t.Helper()
	ctx := context.Background()
	var (
		st  db.Store
		err error
	)
	if url := env["DATABASE_URL"]; url != "" {
		st, err = postgres.Open(ctx, url, db.Options{}, zap.NewNop())
	} else {
		if err := os.MkdirAll(env["THREADFLOW_HOME"], 0o700); err != nil {
			t.Fatal(err)
		}
		st, err = sqlite.Open(ctx, filepath.Join(env["THREADFLOW_HOME"], "threadflow.db"), db.Options{}, zap.NewNop())
	}
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// queueRuns creates n queued runs of the workflow source, as the dispatcher would.
func queueRuns(t *testing.T, st db.Store, src string, n int) []string {
	t.Helper()
	ctx := context.Background()
	wf, err := workflow.Parse("test.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	// On the web platform: a bot claims only runs it can report on, and every bot serves the web page.
	conv, err := st.EnsureConversation(ctx, db.Conversation{Platform: "web", ChannelID: "recovery"})
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, n)
	for i := range ids {
		work := t.TempDir()
		run, err := st.CreateRun(ctx, db.NewRun{Workflow: wf.Name, ConversationID: conv.ID, ParentConversationID: conv.ID,
			UserID: "web:alice", WorkingPath: work, WorkflowSource: wf.Source})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = run.ID
	}
	return ids
}

// waitAll waits until every run has the status; crash tests get three times the usual deadline.
func waitAll(t *testing.T, st db.Store, ids []string, want db.Status) {
	t.Helper()
	testkit.EventuallyWithin(t, 3*testkit.Deadline, fmt.Sprintf("%d runs to be %s", len(ids), want), func() bool {
		for _, id := range ids {
			run, err := st.GetRun(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			if run.Status != want {
				return false
			}
		}
		return true
	})
}

// executions reads a node's counter file: for each run, the attempts that really executed.
func executions(t *testing.T, dir, node string) map[string][]int {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, node))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	out := map[string][]int{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		run, attempt, _ := strings.Cut(sc.Text(), " ")
		n, _ := strconv.Atoi(attempt)
		out[run] = append(out[run], n)
	}
	return out
}

// checkNoRerunAfterCompletion asserts that for every run and node, no attempt executed after the
// attempt that recorded node_completed: a completed node never runs again.
func checkNoRerunAfterCompletion(t *testing.T, st db.Store, dir string, ids []string, nodes int) {
	t.Helper()
	for i := 1; i <= nodes; i++ {
		node := fmt.Sprintf("n%d", i)
		ran := executions(t, dir, node)
		for _, id := range ids {
			events, err := st.Events(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			completed := 0
			for _, e := range events {
				if e.Type == db.EventNodeCompleted && e.NodeID == node {
					if completed != 0 {
						t.Fatalf("run %s node %s completed twice", id, node)
					}
					completed = e.Attempt
				}
			}
			if completed == 0 {
				t.Fatalf("run %s node %s never completed", id, node)
			}
			for _, a := range ran[id] {
				if a > completed {
					t.Fatalf("run %s node %s ran attempt %d after attempt %d completed", id, node, a, completed)
				}
			}
		}
	}
}

// Kill -9 at random moments while the bot works, 20 times (or until no work is left): every run
// completes, and no completed node runs again (../shared/seeds/002_ea3ceaae607d1167.txt: recovery
// never restarts at the entry node).
//
// Each kill comes at a random moment after the bot started a node: a kill timed from the moment the
// bot is up, as it once was, could fall before it claimed anything when a loaded machine slows its
// start, and then interrupted nothing ("only 0 rescues").
func TestKillNineRepeatedlyEveryRunCompletes(t *testing.T) {
	botproc.ForEachEngine(t, botproc.Env, func(t *testing.T, env map[string]string) {
		counters := t.TempDir()
		env["COUNTERS"], env["LEASE_TTL"], env["MAX_RECOVERIES"], env["WORKERS"] = counters, "1s", "1000", "8"
		const nodes = 5
		st := openStore(t, env)
		ids := queueRuns(t, st, countingWorkflow("chain", nodes, "sleep 0.2"), 30)
		p := botproc.Start(t, env)
		for kill := 0; kill < 20; kill++ {
			before, done := startedNodes(t, counters, nodes), false
			testkit.EventuallyWithin(t, testkit.Deadline, "the bot to start a node", func() bool {
				done = allStopped(t, st, ids)
				return done || startedNodes(t, counters, nodes) > before
			})
			if done {
				t.Logf("every run completed after %d kills", kill)
				break
			}
			// The chaos interval: how long the bot works before it is killed, not a wait for work.
			time.Sleep(time.Duration(50+rand.IntN(400)) * time.Millisecond)
			p.Kill()
			p.Restart()
		}
		waitAll(t, st, ids, db.StatusCompleted)
		checkNoRerunAfterCompletion(t, st, counters, ids, nodes)
		if n := countAll(t, st, ids, db.EventRunRescued); n < 5 {
			t.Fatalf("only %d rescues: the kills did not interrupt enough work for this test to mean anything", n)
		}
		running, err := st.ListRuns(context.Background(), db.RunFilter{Statuses: []db.Status{db.StatusRunning, db.StatusQueued}})
		if err != nil || len(running) != 0 {
			t.Fatalf("%d runs still queued or running (%v)", len(running), err)
		}
	})
}

// Three replicas on one PostgreSQL database share 300 runs: every node runs exactly once and no
// run is claimed twice.
func TestReplicasShareWorkWithoutDoubleClaims(t *testing.T) {
	botproc.ForEachEngine(t, botproc.Env, func(t *testing.T, env map[string]string) {
		if env["DATABASE_URL"] == "" {
			t.Skip("replicas share work through PostgreSQL")
		}
		counters := t.TempDir()
		env["COUNTERS"], env["WORKERS"] = counters, "8"
		const nodes = 3
		st := openStore(t, env)
		ids := queueRuns(t, st, countingWorkflow("trio", nodes, "true"), 300)
		for r := 0; r < 3; r++ {
			renv := copyEnv(env)
			renv["REPLICA_ID"] = fmt.Sprintf("replica-%d", r)
			renv["HOME"] = t.TempDir()
			botproc.Start(t, renv)
		}
		waitAll(t, st, ids, db.StatusCompleted)
		owners := map[string]int{}
		for i := 1; i <= nodes; i++ {
			ran := executions(t, counters, fmt.Sprintf("n%d", i))
			for _, id := range ids {
				if len(ran[id]) != 1 {
					t.Fatalf("run %s node n%d executed %d times, want once", id, i, len(ran[id]))
				}
			}
		}
		for _, id := range ids {
			events, err := st.Events(context.Background(), id)
			if err != nil {
				t.Fatal(err)
			}
			claims := 0
			for _, e := range events {
				if e.Type == db.EventRunClaimed {
					claims++
					owners[string(e.Data)]++
				}
			}
			if claims != 1 {
				t.Fatalf("run %s was claimed %d times", id, claims)
			}
		}
		t.Logf("claims per replica: %v", owners)
	})
}

// startedNodes is how many node attempts of the counting workflow have started so far.
func startedNodes(t *testing.T, dir string, nodes int) int {
	t.Helper()
	n := 0
	for i := 1; i <= nodes; i++ {
		b, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("n%d", i)))
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		n += strings.Count(string(b), "\n")
	}
	return n
}

// allStopped reports whether every run stopped (completed, failed or cancelled).
func allStopped(t *testing.T, st db.Store, ids []string) bool {
	t.Helper()
	for _, id := range ids {
		run, err := st.GetRun(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if run.Status == db.StatusQueued || run.Status == db.StatusRunning || run.Status == db.StatusPaused {
			return false
		}
	}
	return true
}

// countAll counts events of one type over runs.
func countAll(t *testing.T, st db.Store, ids []string, typ db.EventType) int {
	t.Helper()
	n := 0
	for _, id := range ids {
		events, err := st.Events(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range events {
			if e.Type == typ {
				n++
			}
		}
	}
	return n
}

func copyEnv(env map[string]string) map[string]string {
	out := make(map[string]string, len(env))
	for k, v := range env {
		out[k] = v
	}
	return out
}

// A worker frozen (SIGSTOP) past its lease loses the run to another replica; when it wakes, its
// writes are rejected and it kills the node's process at once.
func TestFrozenWorkerLosesItsRunAndStopsItsProcess(t *testing.T) {
	botproc.ForEachEngine(t, botproc.Env, func(t *testing.T, env map[string]string) {
		if env["DATABASE_URL"] == "" {
			// A second server on one SQLite file is refused while the first holds it, frozen or not
			// (cmd/bot TestSecondServerOnOneSQLiteFileIsRefusedWithThePID): replicas need PostgreSQL.
			t.Skip("one server per SQLite file")
		}
		pids := t.TempDir()
		env["PIDS"], env["LEASE_TTL"] = pids, "1s"
		st := openStore(t, env)
		src := `
name: nap
nodes:
  - id: long
    bash: 'echo $$ > "$PIDS/attempt-$ATTEMPT"; if [ "$ATTEMPT" = 1 ]; then sleep 60; fi; echo "finished by attempt $ATTEMPT"'
`
		a := botproc.Start(t, env)
		ids := queueRuns(t, st, src, 1)
		pidFile := filepath.Join(pids, "attempt-1")
		testkit.Eventually(t, "attempt 1 to start", func() bool { return agenttest.ReadPid(pidFile) > 0 })
		a.Freeze()
		benv := copyEnv(env)
		benv["HOME"], benv["REPLICA_ID"] = t.TempDir(), "replica-b"
		botproc.Start(t, benv)
		waitAll(t, st, ids, db.StatusCompleted)
		run, _ := st.GetRun(context.Background(), ids[0])
		if run.Meta.Output != "finished by attempt 2" {
			t.Fatalf("output %q, want the other replica's attempt 2", run.Meta.Output)
		}
		before, _ := st.Events(context.Background(), ids[0])
		a.Thaw()
		pid := agenttest.ReadPid(pidFile)
		testkit.Eventually(t, "the frozen worker to kill its node's process", func() bool { return !agenttest.Alive(pid) })
		testkit.Eventually(t, "the frozen worker to log its lost lease", func() bool { return len(a.LogEvents("orchestrator.lease_lost")) > 0 })
		after, _ := st.Events(context.Background(), ids[0])
		if len(after) != len(before) {
			t.Fatalf("the woken worker wrote %d events after losing its lease", len(after)-len(before))
		}
	})
}

// A run that crashes its worker at the same node every time stops after MAX_RECOVERIES rescues and
// says so in chat, instead of looping forever. The node kills the `bot chat` process running it.
func TestCrashLoopStopsAfterMaxRecoveries(t *testing.T) {
	botproc.ForEachEngine(t, botproc.Env, func(t *testing.T, env map[string]string) {
		wf := t.TempDir()
		src := "name: crasher\nnodes:\n  - id: ok\n    bash: echo fine\n  - id: boom\n    depends_on: [ok]\n    bash: kill -9 $PPID\n"
		if err := os.WriteFile(filepath.Join(wf, "crasher.yaml"), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
		env["WORKFLOWS_DIR"], env["LEASE_TTL"], env["MAX_RECOVERIES"] = wf, "1s", "2"
		out := chatOnce(t, env, "/workflow run crasher")
		for i := 0; i < 10 && !strings.Contains(out, "Recently failed"); i++ {
			out += "\n---\n" + chatOnce(t, env, "/workflow status")
		}
		t.Logf("chat transcript:\n%s", out)
		for _, want := range []string{"failed", "in a row", "/workflow resume", "/workflow abandon"} {
			if !strings.Contains(out, want) {
				t.Fatalf("chat output lacks %q:\n%s", want, out)
			}
		}
		st := openStore(t, env)
		runs, err := st.ListRuns(context.Background(), db.RunFilter{Workflow: "crasher"})
		if err != nil || len(runs) != 1 || runs[0].Status != db.StatusFailed || runs[0].Recoveries != 3 {
			t.Fatalf("runs = %+v (%v); want one failed run after 3 rescues", runs, err)
		}
	})
}

// chatOnce runs `bot chat` with one message and returns what it printed. It may be killed by the
// workflow it runs; that is the point of the crash tests.
func chatOnce(t *testing.T, env map[string]string, msg string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testkit.Deadline)
	defer cancel()
	cmd := botproc.CommandContext(ctx, t, env, "chat", "--conversation", "crash", msg)
	out, _ := cmd.Output() // stdout is the chat; a crash exit is expected
	return string(out)
}

// The scenario of ../shared/seeds/002_ea3ceaae607d1167.txt: the process crashes after the first
// node completed and during the second. Recovery resumes at the second node, the first never runs
// again, and replaying the first node's completion record is accepted as a no-op.
func TestCrashDuringSecondNodeResumesAtTheSecondNode(t *testing.T) {
	botproc.ForEachEngine(t, botproc.Env, func(t *testing.T, env map[string]string) {
		counters := t.TempDir()
		env["COUNTERS"], env["LEASE_TTL"] = counters, "1s"
		st := openStore(t, env)
		src := `
name: phases
nodes:
  - id: preflight
    bash: 'echo "$RUN_ID $ATTEMPT" >> "$COUNTERS/preflight"; echo checked'
  - id: execute
    depends_on: [preflight]
    bash: 'echo "$RUN_ID $ATTEMPT" >> "$COUNTERS/execute"; if [ "$ATTEMPT" = 1 ]; then kill -9 $PPID; sleep 5; fi; echo executed'
`
		p := botproc.Start(t, env)
		ids := queueRuns(t, st, src, 1)
		p.Exit() // the execute node kills the bot
		ctx := context.Background()
		run, err := st.GetRun(ctx, ids[0])
		if err != nil || run.Status != db.StatusRunning {
			t.Fatalf("after the crash the run is %s (%v), want running until its lease expires", run.Status, err)
		}
		events, _ := st.Events(ctx, run.ID)
		var done db.Event
		for _, e := range events {
			if e.Type == db.EventNodeCompleted && e.NodeID == "preflight" {
				done = e
			}
		}
		replayed, err := st.RecordEvent(ctx, run.Lease(), db.Event{RunID: run.ID, Type: db.EventNodeCompleted, NodeID: "preflight", Attempt: done.Attempt, Data: done.Data})
		if err != nil || replayed.Seq != done.Seq {
			t.Fatalf("replaying preflight's completion = seq %d, %v; want the stored event %d as a no-op", replayed.Seq, err, done.Seq)
		}
		p.Restart()
		waitAll(t, st, ids, db.StatusCompleted)
		if got := executions(t, counters, "preflight")[run.ID]; len(got) != 1 {
			t.Fatalf("preflight ran attempts %v, want once", got)
		}
		if got := executions(t, counters, "execute")[run.ID]; fmt.Sprint(got) != "[1 2]" {
			t.Fatalf("execute ran attempts %v, want [1 2]", got)
		}
	})
}

// A shell node's sh dies with the bot (Pdeathsig), but what its script started in the background
// does not. The worker that takes the run over stops those strays before the node runs again, so
// two attempts of one node never run side by side.
func TestTakeoverStopsWhatACrashedNodeLeftRunning(t *testing.T) {
	botproc.ForEachEngine(t, botproc.Env, func(t *testing.T, env map[string]string) {
		counters := t.TempDir()
		env["COUNTERS"], env["LEASE_TTL"] = counters, "1s"
		st := openStore(t, env)
		src := `
name: stray
nodes:
  - id: build
    bash: 'if [ "$ATTEMPT" = 1 ]; then sleep 600 & echo $! > "$COUNTERS/stray.pid"; kill -9 $PPID; wait; fi; echo built'
`
		p := botproc.Start(t, env)
		ids := queueRuns(t, st, src, 1)
		p.Exit() // the build node kills the bot
		pid := agenttest.ReadPid(filepath.Join(counters, "stray.pid"))
		if pid == 0 || !running(pid) {
			t.Fatalf("the background sleep (pid %d) is not running after the crash, so this test would prove nothing", pid)
		}
		// Only if the takeover did not: by the test's end the sleep is gone and its pid may be
		// another test's process (pid_max is 32,768 here), so the kill checks the run's tag first.
		t.Cleanup(func() { proctag.Kill([]int{pid}, proctag.Entry(proctag.RunEnv, ids[0])) })
		p.Restart()
		waitAll(t, st, ids, db.StatusCompleted)
		if running(pid) {
			t.Fatalf("the sleep the crashed attempt started (pid %d) still runs after the run was taken over and completed", pid)
		}
	})
}

// running reports whether pid is a live process (not gone, not a zombie awaiting its reaper).
func running(pid int) bool {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	i := strings.LastIndexByte(string(stat), ')')
	return i >= 0 && !strings.HasPrefix(string(stat[i+1:]), " Z") && !strings.HasPrefix(string(stat[i+1:]), " X")
}
