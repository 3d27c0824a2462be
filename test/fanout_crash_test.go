package test

import (
	"context"
	"testing"

	"threadflow/db"
	"threadflow/testkit/botproc"
)

// TestKilledWhileFanOutChildrenRunStartsNoChildTwice: the bot is killed with SIGKILL while a
// fan_out node's children run (one child's node kills it); after the takeover the parent finds the
// children it started by their derived ids, starts the ones it had not, and completes: one child
// run per item, never two, and the node's output is their outputs in item order.
func TestKilledWhileFanOutChildrenRunStartsNoChildTwice(t *testing.T) {
	botproc.ForEachEngine(t, botproc.Env, func(t *testing.T, env map[string]string) {
		counters := writeChildWorkflow(t, env, `name: child
nodes:
  - id: work
    bash: 'echo "$RUN_ID $ATTEMPT" >> "$COUNTERS/work"; if [ "$ARGUMENTS" = kill ] && [ "$ATTEMPT" = 1 ]; then kill -9 $PPID; sleep 5; fi; echo "did $ARGUMENTS"'
`)
		st := openStore(t, env)
		p := botproc.Start(t, env)
		ids := queueRuns(t, st, "name: parent\nnodes:\n  - id: each\n    workflow: child\n    fan_out:\n      items: '[\"x\", \"kill\", \"y\"]'\n      max_parallel: 3\n", 1)
		p.Exit() // the kill item's child kills the bot
		p.Restart()
		waitAll(t, st, ids, db.StatusCompleted)
		kids, err := st.ListRuns(context.Background(), db.RunFilter{ParentRunID: ids[0]})
		if err != nil || len(kids) != 3 {
			t.Fatalf("children of %s = %+v, %v; want one per item", ids[0], kids, err)
		}
		ran := executions(t, counters, "work")
		for i := range 3 {
			id := db.ChildRunID(ids[0], "each", i)
			k, err := st.GetRun(context.Background(), id)
			if err != nil || k.Status != db.StatusCompleted {
				t.Errorf("item %d's child %s: %s, %v", i, id, k.Status, err)
			}
			if len(ran[id]) == 0 {
				t.Errorf("item %d's child never ran its node", i)
			}
		}
		if got := ran[db.ChildRunID(ids[0], "each", 1)]; len(got) != 2 {
			t.Errorf("the kill item's child ran attempts %v, want the killed one and one after the takeover", got)
		}
		parent, err := st.GetRun(context.Background(), ids[0])
		if err != nil || parent.Meta.Output != `["did x","did kill","did y"]` {
			t.Fatalf("the parent completed with %q, %v", parent.Meta.Output, err)
		}
	})
}
