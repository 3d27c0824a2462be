package test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"threadflow/db"
	"threadflow/testkit/botproc"
)

// TestKilledWhileAChildRunsCompletesWithOneChild: the bot is killed with SIGKILL while a parent
// waits for its child (the child's node kills it); after the takeover the parent finds the child it
// started (its id is derived), and both complete: one child run, whose node ran twice (the killed
// attempt and the one after the takeover), and the parent's output is the child's.
func TestKilledWhileAChildRunsCompletesWithOneChild(t *testing.T) {
	botproc.ForEachEngine(t, botproc.Env, func(t *testing.T, env map[string]string) {
		counters := writeChildWorkflow(t, env, `name: child
nodes:
  - id: work
    bash: 'echo "$RUN_ID $ATTEMPT" >> "$COUNTERS/work"; if [ "$ATTEMPT" = 1 ]; then kill -9 $PPID; sleep 5; fi; echo child-done'
`)
		st := openStore(t, env)
		p := botproc.Start(t, env)
		ids := queueRuns(t, st, "name: parent\nnodes:\n  - id: sub\n    workflow: child\n  - id: after\n    depends_on: [sub]\n    bash: echo \"got $sub.output\"\n", 1)
		p.Exit() // the child's node kills the bot
		p.Restart()
		waitAll(t, st, ids, db.StatusCompleted)
		kids, err := st.ListRuns(context.Background(), db.RunFilter{ParentRunID: ids[0]})
		if err != nil || len(kids) != 1 || kids[0].Status != db.StatusCompleted || kids[0].ID != db.ChildRunID(ids[0], "sub", -1) {
			t.Fatalf("children of %s = %+v, %v; want one completed child", ids[0], kids, err)
		}
		if got := executions(t, counters, "work")[kids[0].ID]; len(got) != 2 {
			t.Fatalf("the child's node ran attempts %v, want the killed one and one more", got)
		}
		events, err := st.Events(context.Background(), ids[0])
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range events {
			if e.Type == db.EventNodeCompleted && e.NodeID == "after" {
				if got := db.Decode[db.NodeCompletedData](e).Output; got != "got child-done" {
					t.Fatalf("after printed %q, want the child's output", got)
				}
				return
			}
		}
		t.Fatal("the parent's after node never completed")
	})
}

// writeChildWorkflow puts the workflow `child` (its YAML given) in the bot's workflows folder, with
// a short lease so a takeover follows a kill quickly, and returns the COUNTERS folder its nodes
// record their executions in.
func writeChildWorkflow(t *testing.T, env map[string]string, yaml string) string {
	t.Helper()
	counters := t.TempDir()
	env["COUNTERS"], env["LEASE_TTL"] = counters, "1s"
	wfDir := filepath.Join(env["THREADFLOW_HOME"], "workflows")
	if err := os.MkdirAll(wfDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(wfDir, "child.yaml"), []byte(yaml), 0o644); err != nil {
		t.Fatal(err)
	}
	return counters
}
