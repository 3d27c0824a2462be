package storetest

import (
	"sync"
	"testing"
	"time"

	"threadflow/db"
)

func usageTests() []test {
	return []test{
		{"TurnsAreSummedPerNodeRunWorkflowAndDay", testUsageSums},
		{"ConcurrentTurnsOfTwoRunsAllCount", testUsageConcurrent},
		{"BudgetRecordedOnlyOnAStoppedRun", testRecordBudget},
	}
}

func nanos(n int64) *int64 { return &n }

// recordUsage records agent_usage events at node under l, failing the test on an error.
func (e *env) recordUsage(t *testing.T, l db.Lease, node string, us ...db.AgentUsageData) {
	t.Helper()
	for i, u := range us {
		if _, err := e.s.RecordEvent(e.ctx, l, db.NewEvent(l.RunID, node, i+1, u, time.Time{})); err != nil {
			t.Fatalf("record agent_usage: %v", err)
		}
	}
}

// testUsageSums: known, estimated, unpriced and unknown turns sum per node, run, workflow and
// since a time; an unknown turn counts as a turn but adds no tokens and no cost.
func testUsageSums(t *testing.T, e *env) {
	a, la := e.runIn(t, fxRunning, nil)
	claude := db.AgentUsageData{Provider: "claude", Model: "claude-sonnet-4-5", InputTokens: 100, OutputTokens: 20,
		CacheReadTokens: 7, CacheWriteTokens: 3, Turns: 2, CostNanos: nanos(20_000_000)}
	codex := db.AgentUsageData{Provider: "codex", Model: "gpt-5", InputTokens: 1000, OutputTokens: 10, Turns: 1,
		CostNanos: nanos(1_350_000), Estimated: true}
	unpriced := db.AgentUsageData{Provider: "codex", Model: "gpt-stub", InputTokens: 5, OutputTokens: 5, Turns: 1}
	unknown := db.AgentUsageData{Provider: "claude", Unknown: true}
	e.recordUsage(t, la, "plan", claude, claude)
	e.recordUsage(t, la, "code", codex, unpriced, unknown)
	e.clock.Advance(25 * time.Hour)
	b, lb := e.runIn(t, fxRunning, func(n *db.NewRun) { n.Workflow = "review" })
	e.recordUsage(t, lb, "look", claude)

	byNode, err := e.s.AgentUsage(e.ctx, db.UsageQuery{By: db.UsageByNode, RunIDs: []string{a.ID}})
	if err != nil {
		t.Fatal(err)
	}
	wantSums(t, "node code", db.UsageOf(byNode, "code"), db.UsageSum{Key: "code", Turns: 3, UnknownTurns: 1, UnpricedTurns: 2,
		InputTokens: 1005, OutputTokens: 15, ModelTurns: 2, CostNanos: 1_350_000, Estimated: true})
	wantSums(t, "node plan", db.UsageOf(byNode, "plan"), db.UsageSum{Key: "plan", Turns: 2, InputTokens: 200, OutputTokens: 40,
		CacheReadTokens: 14, CacheWriteTokens: 6, ModelTurns: 4, CostNanos: 40_000_000})
	if len(byNode) != 2 || byNode[0].Key != "code" {
		t.Errorf("per node = %+v, want code then plan", byNode)
	}
	byRun, err := e.s.AgentUsage(e.ctx, db.UsageQuery{By: db.UsageByRun, RunIDs: []string{a.ID, b.ID}})
	if err != nil || len(byRun) != 2 {
		t.Fatalf("per run = %+v, %v", byRun, err)
	}
	if got := db.UsageOf(byRun, a.ID); got.Turns != 5 || got.CostNanos != 41_350_000 || got.CostKnown() || !got.Estimated {
		t.Errorf("run a = %+v, want 5 turns, 41.35 m nanodollars, not all priced, estimated", got)
	}
	if got := db.UsageOf(byRun, b.ID); got.Turns != 1 || got.CostNanos != 20_000_000 || !got.CostKnown() || got.Estimated {
		t.Errorf("run b = %+v", got)
	}
	byWorkflow, err := e.s.AgentUsage(e.ctx, db.UsageQuery{By: db.UsageByWorkflow, Since: start})
	if err != nil || len(byWorkflow) != 2 || byWorkflow[0].Key != "build" || byWorkflow[1].Key != "review" {
		t.Fatalf("per workflow = %+v, %v", byWorkflow, err)
	}
	today, err := e.s.AgentUsage(e.ctx, db.UsageQuery{Since: start.Add(24 * time.Hour)})
	if err != nil || len(today) != 1 || today[0].Turns != 1 || today[0].CostNanos != 20_000_000 {
		t.Fatalf("total since a day later = %+v, %v; want only run b's turn", today, err)
	}
	none, err := e.s.AgentUsage(e.ctx, db.UsageQuery{RunIDs: []string{"nosuchrun"}})
	if err != nil || len(none) != 1 || none[0].Turns != 0 || !none[0].CostKnown() {
		t.Fatalf("total of no turns = %+v, %v; want one zero row", none, err)
	}
	// The event itself is kept as it was written: the table is a copy, not the record.
	var seen int
	for _, ev := range e.events(t, a.ID) {
		if ev.Type == db.EventAgentUsage {
			seen++
		}
	}
	if seen != 5 {
		t.Errorf("run a has %d agent_usage events, want 5", seen)
	}
}

// testUsageConcurrent: turns recorded at once by the workers of several runs are all summed (the
// copy is made in each event's own statement).
func testUsageConcurrent(t *testing.T, e *env) {
	const runs, turns = 4, 8
	leases := make([]db.Lease, runs)
	for i := range leases {
		_, leases[i] = e.runIn(t, fxRunning, nil)
	}
	var wg sync.WaitGroup
	for _, l := range leases {
		wg.Go(func() {
			for i := range turns {
				u := db.AgentUsageData{Provider: "claude", InputTokens: 1, CostNanos: nanos(1000)}
				if _, err := e.s.RecordEvent(e.ctx, l, db.NewEvent(l.RunID, "n", i+1, u, time.Time{})); err != nil {
					t.Errorf("record: %v", err)
				}
			}
		})
	}
	wg.Wait()
	total, err := e.s.AgentUsage(e.ctx, db.UsageQuery{})
	if err != nil || len(total) != 1 || total[0].Turns != runs*turns || total[0].CostNanos != runs*turns*1000 {
		t.Fatalf("total = %+v, %v; want %d turns", total, err, runs*turns)
	}
}

// testRecordBudget: budget_changed is recorded on a paused or failed run, refused otherwise.
func testRecordBudget(t *testing.T, e *env) {
	b := db.BudgetChangedData{By: "slack:U1", RunNanos: nanos(100_000_000), Nodes: map[string]int64{"loop": 50_000_000}}
	// The queued run last: each fixture claims the oldest queued run.
	for _, f := range append(allFixtures[1:], fxQueued) {
		r, _ := e.runIn(t, f, nil)
		_, err := e.s.RecordBudget(e.ctx, r.ID, b)
		switch s := f.status(); s {
		case db.StatusPaused, db.StatusFailed:
			if err != nil {
				t.Errorf("%s: RecordBudget: %v", f, err)
			} else if ev := e.last(t, r.ID); ev.Type != db.EventBudgetChanged {
				t.Errorf("%s: last event %s, want budget_changed", f, ev.Type)
			}
		default:
			wantTransitionError(t, err, r.ID, s, false)
		}
	}
	if _, err := e.s.RecordBudget(e.ctx, "nosuchrun", b); err == nil {
		t.Error("RecordBudget of a run that does not exist succeeded")
	}
}

func wantSums(t *testing.T, what string, got, want db.UsageSum) {
	t.Helper()
	if got != want {
		t.Errorf("%s = %+v\nwant %+v", what, got, want)
	}
}
