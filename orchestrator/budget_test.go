package orchestrator_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"threadflow/agent/agenttest"
	"threadflow/db"
	"threadflow/db/dbtest"
)

const spendingLoop = `
name: spend
nodes:
  - id: draft
    max_cost_usd: %s
    loop:
      prompt: "draft iteration $LOOP_ITERATION"
      until: DONE
      max_iterations: 10
`

// usageEvents decodes a run's agent_usage events.
func (h *harness) usageEvents(id string) []db.AgentUsageData {
	h.t.Helper()
	var out []db.AgentUsageData
	for _, e := range h.events(id) {
		if e.Type == db.EventAgentUsage {
			out = append(out, db.Decode[db.AgentUsageData](e))
		}
	}
	return out
}

func countEvents(events []db.Event, typ db.EventType) int {
	n := 0
	for _, e := range events {
		if e.Type == typ {
			n++
		}
	}
	return n
}

// A loop whose iterations each report $0.02 under max_cost_usd: 0.05 pauses after the third
// iteration (spent $0.06), before a fourth turn starts, with a message naming the budget, what
// was spent and how to continue. A resume with the budget unchanged pauses again without a turn;
// once the file raises it, the resume records budget_changed and the loop continues at its fourth
// iteration, not its first.
func TestLoopBudgetPausesAndResumesOnceRaised(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		h.script.SetCost("0.02")
		h.writeWorkflow("spend", strings.Replace(spendingLoop, "%s", "0.05", 1))
		run := h.waitStatus(h.startRun("spend", "").ID, db.StatusPaused)
		if p := run.Meta.Pause; p == nil || p.Kind != db.PauseRecovery || p.Node != "draft" {
			t.Fatalf("pause = %+v, want a recovery pause at draft", run.Meta.Pause)
		}
		msg := joined(h.waitMessage("The budget of node draft is reached"))
		for _, want := range []string{"max_cost_usd of node draft is $0.0500", "have spent $0.0600",
			"raise `max_cost_usd` of node draft in the workflow file, then resume", "abandon",
			"AI usage: $0.0600 over 3 agent turns (30 input, 15 output tokens)", "/workflow resume " + run.ID} {
			if !strings.Contains(msg, want) {
				t.Errorf("the pause message lacks %q:\n%s", want, msg)
			}
		}
		events := h.events(run.ID)
		if n := countEvents(events, db.EventLoopIteration); n != 3 {
			t.Errorf("%d iterations completed, want 3", n)
		}
		usage := h.usageEvents(run.ID)
		if len(usage) != 3 || usage[0].Provider != "claude" || usage[0].Model != agenttest.FakeModel || *usage[0].CostNanos != 20_000_000 ||
			usage[0].InputTokens != 10 || usage[0].OutputTokens != 5 || usage[0].Estimated {
			t.Errorf("agent_usage = %+v, want 3 turns of 10/5 tokens and $0.02 each, reported by the CLI", usage)
		}
		// Claude Code got what was left as its own cap: $0.05, $0.03, $0.01.
		calls := h.script.Calls()
		for i, want := range []string{"0.05", "0.03", "0.01"} {
			if i < len(calls) && !strings.Contains(strings.Join(calls[i].Args, " "), "--max-budget-usd "+want) {
				t.Errorf("turn %d args %v, want --max-budget-usd %s", i+1, calls[i].Args, want)
			}
		}

		h.say(admin, "", "/workflow resume "+run.ID) // the budget as it was: paused again, no turn
		h.waitFor("the run to pause again", func() bool {
			r := h.waitStatus(run.ID, db.StatusPaused, db.StatusQueued, db.StatusRunning)
			return r.Status == db.StatusPaused && r.Attempt == 1
		})
		if n := len(h.script.Calls()); n != 3 {
			t.Errorf("a resume under the same budget ran %d turns in all, want the 3 before", n)
		}

		h.writeWorkflow("spend", strings.Replace(spendingLoop, "%s", "0.20", 1))
		h.script.SetReply("DONE")
		h.say(admin, "", "/workflow resume "+run.ID)
		done := h.waitCompleted(run.ID)
		events = h.events(done.ID)
		if n := countEvents(events, db.EventLoopIteration); n != 4 {
			t.Errorf("%d iterations in all, want 4: the resume continues at the fourth", n)
		}
		var changed []db.BudgetChangedData
		for _, e := range events {
			if e.Type == db.EventBudgetChanged {
				changed = append(changed, db.Decode[db.BudgetChangedData](e))
			}
		}
		if len(changed) != 1 || changed[0].Nodes["draft"] != 200_000_000 || changed[0].By != admin {
			t.Errorf("budget_changed = %+v, want one, draft at $0.20, by %s", changed, admin)
		}
		if calls := h.script.Calls(); len(calls) != 4 || !strings.Contains(calls[3].Prompt, "draft iteration 4") {
			t.Errorf("after the raise: %d turns in all, the last %q; want a 4th, iteration 4", len(calls), calls[len(calls)-1].Prompt)
		}
		h.waitMessage("AI usage: $0.0800 over 4 agent turns")
	})
}

// The workflow's max_cost_usd counts every node's turns: the third prompt does not start once the
// first two spent it, and /workflow status says what the run used.
func TestWorkflowBudgetPausesTheRun(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		h.script.SetCost("0.02")
		h.writeWorkflow("three", `
name: three
max_cost_usd: 0.03
nodes:
  - id: a
    prompt: one
  - id: b
    depends_on: [a]
    prompt: two
  - id: c
    depends_on: [b]
    prompt: three
`)
		run := h.waitStatus(h.startRun("three", "").ID, db.StatusPaused)
		if p := run.Meta.Pause; p == nil || p.Node != "c" || !strings.Contains(p.Error, "The budget of run "+run.ID+" is reached: the workflow's max_cost_usd is $0.0300 and the run's agent turns have spent $0.0400") {
			t.Fatalf("pause = %+v, want the run's budget reached before c", run.Meta.Pause)
		}
		if n := len(h.script.Calls()); n != 2 {
			t.Errorf("%d turns ran, want 2", n)
		}
		status := joined(h.say(admin, "", "/workflow status "+run.ID))
		if !strings.Contains(status, "AI usage: $0.0400 over 2 agent turns (20 input, 10 output tokens)") {
			t.Errorf("/workflow status lacks the run's usage:\n%s", status)
		}
	})
}

// A CLI that reports no usage is recorded as unknown, never as zero; one that reports an absurd
// figure (NaN) is refused and recorded as unknown too, and the run goes on.
func TestUnknownAndAbsurdUsageAreNotZero(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		h.writeWorkflow("one", "name: one\nnodes:\n  - id: a\n    prompt: one\n")
		var usage []db.AgentUsageData
		for _, cost := range []string{"", `"NaN"`} { // no usage at all, then an absurd cost
			h.script.SetCost(cost)
			done := h.waitCompleted(h.startRun("one", "").ID)
			usage = append(usage, h.usageEvents(done.ID)...)
			sums, err := h.store.AgentUsage(context.Background(), db.UsageQuery{RunIDs: []string{done.ID}})
			if err != nil || sums[0].UnknownTurns != 1 || sums[0].CostKnown() {
				t.Errorf("cost %s: sum = %+v, %v; want 1 unknown turn, cost not known", cost, sums, err)
			}
		}
		if len(usage) != 2 || !usage[0].Unknown || usage[0].CostNanos != nil || usage[0].Refused != "" ||
			!usage[1].Unknown || usage[1].CostNanos != nil || usage[1].Refused == "" {
			t.Errorf("agent_usage = %+v, want two unknown turns, the second refused", usage)
		}
		h.waitMessage("AI usage: cost unknown over 1 agent turn; 1 reported no usage")
	})
}

// AGENT_DAILY_BUDGET_USD is summed in the database: two replicas on one PostgreSQL share it. The
// turns one replica's runs spent count against the other's next turns, whichever replica runs them,
// and once the sum is reached every new agent turn pauses its run, naming the setting.
func TestDailyBudgetHoldsAcrossReplicas(t *testing.T) {
	t.Parallel()
	url := dbtest.PostgresDatabase(t)
	open := func(t testing.TB, o db.Options) db.Store { return dbtest.PostgresOn(t, url, o) }
	replicas := []*harness{newHarness(t, open), newHarness(t, open)}
	for i, h := range replicas {
		h.cfg.DailyBudget, h.cfg.Owner = 50_000_000, fmt.Sprintf("replica-%d", i+1)
		h.restart()
		h.script.SetCost("0.02")
		h.writeWorkflow("two", "name: two\nnodes:\n  - id: a\n    prompt: one\n  - id: b\n    depends_on: [a]\n    prompt: two\n")
	}
	a, b := replicas[0], replicas[1]
	turns := func() int { return len(a.script.Calls()) + len(b.script.Calls()) }

	a.waitCompleted(a.startRun("two", "").ID) // $0.04 of $0.05
	second := b.waitStatus(b.startRun("two", "--force").ID, db.StatusPaused)
	want := "The budget of the bot is reached: AGENT_DAILY_BUDGET_USD is $0.0500 and the agent turns of every run today (UTC) have spent $0.0600."
	if p := second.Meta.Pause; p == nil || p.Node != "b" || p.Error != want {
		t.Fatalf("the second run's pause = %+v; want at b: %s", second.Meta.Pause, want)
	}
	third := a.waitStatus(a.startRun("two", "--force").ID, db.StatusPaused)
	if p := third.Meta.Pause; p == nil || p.Node != "a" || !strings.Contains(p.Error, "AGENT_DAILY_BUDGET_USD") {
		t.Fatalf("the third run's pause = %+v; want before its first turn, naming AGENT_DAILY_BUDGET_USD", third.Meta.Pause)
	}
	if n := turns(); n != 3 {
		t.Errorf("%d agent turns ran on the two replicas, want 3", n)
	}
}
