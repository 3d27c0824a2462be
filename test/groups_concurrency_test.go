package test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"threadflow/db"
	"threadflow/db/dbtest"
	"threadflow/testkit"
	"threadflow/testkit/botproc"
)

// groupRelease is a release that runs one at a time per environment. Its node logs when it starts
// and ends, and holds until the test creates go-<run id>, so the test decides when a holder ends.
func groupRelease(busy string) string {
	return `name: release
inputs:
  - name: env
    type: choice
    choices: [staging, prod]
    required: true
concurrency:
  group: release-${inputs.env}
  when_busy: ` + busy + `
nodes:
  - id: ship
    bash: |
      echo "start $RUN_ID $INPUT_ENV" >> "$COUNTERS/log"
      while [ ! -e "$COUNTERS/go-$RUN_ID" ]; do sleep 0.05; done
      echo "end $RUN_ID" >> "$COUNTERS/log"
`
}

// groupReplicas starts two server replicas on one PostgreSQL database with the release of busy.
func groupReplicas(t *testing.T, busy string) (db.Store, []*botproc.Process, []chatClient, string) {
	t.Helper()
	env := botproc.Env(t)
	env["DATABASE_URL"] = dbtest.PostgresDatabase(t) // replicas share a group through PostgreSQL
	counters := t.TempDir()
	env["COUNTERS"], env["LEASE_TTL"] = counters, "1s"
	env["WORKFLOWS_DIR"] = workflowDir(t, map[string]string{"release.yaml": groupRelease(busy)})
	st := openStore(t, env)
	var bots []*botproc.Process
	var clients []chatClient
	for r := range 2 {
		renv := copyEnv(env)
		renv["REPLICA_ID"], renv["HOME"] = fmt.Sprintf("replica-%d", r), t.TempDir()
		p := botproc.Start(t, renv)
		p.WaitUp()
		bots = append(bots, p)
		clients = append(clients, chatClient{t, p.URL(), fmt.Sprintf("person%d", r)})
	}
	return st, bots, clients, counters
}

// startTogether types the same run command on both replicas at the same instant.
func startTogether(clients []chatClient, text string) {
	start := make(chan struct{})
	var wg sync.WaitGroup
	for _, c := range clients {
		wg.Go(func() {
			<-start
			c.say(text)
		})
	}
	close(start)
	wg.Wait()
}

// releases lists the release runs, oldest first.
func releases(t *testing.T, st db.Store) []db.Run {
	t.Helper()
	runs, err := st.ListRuns(context.Background(), db.RunFilter{Workflow: "release"})
	if err != nil {
		t.Fatal(err)
	}
	for i, j := 0, len(runs)-1; i < j; i, j = i+1, j-1 {
		runs[i], runs[j] = runs[j], runs[i]
	}
	return runs
}

func logLines(t *testing.T, counters string) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(counters, "log"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Fields(strings.ReplaceAll(strings.TrimSpace(string(b)), "\n", " | "))
}

func logText(t *testing.T, counters string) string { return strings.Join(logLines(t, counters), " ") }

func letGo(t *testing.T, counters, runID string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(counters, "go-"+runID), nil, 0o644); err != nil {
		t.Fatal(err)
	}
}

// Two release runs of one group typed at the same instant on two replicas: one holds the group and
// runs, the other waits in line (its thread says so). The holder's replica is SIGKILLed while the
// holder runs: the holder keeps the group while the other replica takes it over, the waiter starts
// only once the holder completed, and both complete: two runs, one at a time.
func TestGroupRunsOneAtATimeAcrossReplicasAndAKill(t *testing.T) {
	st, bots, clients, counters := groupReplicas(t, "queue")
	startTogether(clients, "/workflow run release env=prod")
	var holder, waiter db.Run
	testkit.Eventually(t, "two release runs, one holding release-prod and running", func() bool {
		runs := releases(t, st)
		if len(runs) != 2 || !strings.Contains(logText(t, counters), "start") {
			return false
		}
		for _, r := range runs {
			p, err := st.GroupPlace(context.Background(), r.ID)
			if err != nil {
				return false
			}
			if p.Waiting() {
				waiter = r
			} else {
				holder = r
			}
		}
		return holder.ID != "" && waiter.ID != ""
	})
	if p, err := st.GroupPlace(context.Background(), waiter.ID); err != nil || p.Place != 1 || p.Holder != holder.ID || p.Group != "release-prod" {
		t.Fatalf("waiter's place %+v, %v; want 1st in line behind %s", p, err, holder.ID)
	}
	if w, _ := st.GetRun(context.Background(), waiter.ID); w.Status != db.StatusQueued || w.Inputs["env"] != "prod" {
		t.Fatalf("waiter is %s with inputs %v; want queued with env=prod", w.Status, w.Inputs)
	}
	testkit.Eventually(t, "the waiter's thread to say it waits, and where", func() bool {
		for _, c := range clients {
			if _, page := c.thread(); strings.Contains(page, "1st in line") {
				return true
			}
		}
		return false
	})
	// Kill the replica executing the holder; the other takes the holder over once its lease expires.
	h, err := st.GetRun(context.Background(), holder.ID)
	if err != nil {
		t.Fatal(err)
	}
	killed := 0
	if strings.HasPrefix(h.LeaseOwner, "replica-1") {
		killed = 1
	}
	bots[killed].Kill()
	testkit.EventuallyWithin(t, 3*testkit.Deadline, "the holder to start again on the surviving replica", func() bool {
		return strings.Count(logText(t, counters), "start "+holder.ID) == 2
	})
	if p, err := st.GroupPlace(context.Background(), waiter.ID); err != nil || p.Holder != holder.ID {
		t.Fatalf("after the takeover the waiter is %+v, %v; want it still behind %s", p, err, holder.ID)
	}
	letGo(t, counters, holder.ID)
	testkit.EventuallyWithin(t, 3*testkit.Deadline, "the waiter to start once the holder ended", func() bool {
		return strings.Contains(logText(t, counters), "start "+waiter.ID)
	})
	testkit.Eventually(t, "the waiter's note to say the group is its now", func() bool {
		for _, c := range clients { // any replica serves anyone's pages: ask the one alive
			c.base = clients[1-killed].base
			if _, page := c.thread(); strings.Contains(page, "is this run&#39;s now") || strings.Contains(page, "is this run's now") {
				return true
			}
		}
		return false
	})
	letGo(t, counters, waiter.ID)
	waitAll(t, st, []string{holder.ID, waiter.ID}, db.StatusCompleted)
	log := logText(t, counters)
	if !strings.HasSuffix(log, "end "+holder.ID+" | start "+waiter.ID+" prod | end "+waiter.ID) {
		t.Fatalf("the runs overlapped or ran out of order:\n%s", log)
	}
}

// With when_busy: refuse, the second of two runs typed at the same instant on two replicas is
// refused, naming the holder, and nothing of it is written.
func TestGroupRefusesTheSecondRunAcrossReplicas(t *testing.T) {
	st, _, clients, counters := groupReplicas(t, "refuse")
	startTogether(clients, "/workflow run release env=prod")
	var refused chatClient
	testkit.Eventually(t, "one person told the group is busy", func() bool {
		for _, c := range clients {
			if strings.Contains(c.page(), "runs one at a time in concurrency group") {
				refused = c
				return true
			}
		}
		return false
	})
	runs := releases(t, st)
	if len(runs) != 1 {
		t.Fatalf("%d release runs were created, want 1", len(runs))
	}
	if page := refused.page(); !strings.Contains(page, runs[0].ID) {
		t.Fatalf("the refusal does not name the holder %s:\n%s", runs[0].ID, page)
	}
	letGo(t, counters, runs[0].ID)
	waitAll(t, st, []string{runs[0].ID}, db.StatusCompleted)
	clients[0].say("/workflow run release env=prod") // free again once the holder completed
	testkit.Eventually(t, "a second release once the first completed", func() bool { return len(releases(t, st)) == 2 })
	letGo(t, counters, releases(t, st)[1].ID)
}
