package execution

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"threadflow/agent"
	"threadflow/db"
	"threadflow/workflow"
)

// Budgets are enforced before every agent turn (a prompt node's turn, each loop iteration): what
// the turns recorded so far spent is summed in the database (agent_turns), so the run's and the
// day's budgets hold across resumes, crashes and replicas. A budget reached pauses the run (a
// recovery pause, resumable) with a message naming the budget and what was spent; the turn
// running when a budget is crossed finishes, and Claude Code is also given the remainder as its
// own cap (--max-budget-usd).

// DailyBudgetEnv names the bot-wide budget of agent turns per UTC day.
const DailyBudgetEnv = "AGENT_DAILY_BUDGET_USD"

// budgetReached is the error a turn returns instead of running: the node pauses the run.
type budgetReached struct{ pause db.Pause }

func (b *budgetReached) Error() string { return b.pause.Error }

// budgets are the run's budgets: the latest budget_changed a resume recorded, else the frozen
// workflow's.
func (e *execution) budgets() db.BudgetChangedData {
	if e.budgetsChanged != nil {
		return *e.budgetsChanged
	}
	return e.wf.Budgets("")
}

// limit is one budget, what it has spent and how to raise it.
type limit struct {
	what, setting string // "node loop", "max_cost_usd of node loop"
	nanos, spent  int64
	scope         string // whose turns spent it
	raise         string
}

// checkBudgets returns a *budgetReached when a budget of the run or the bot is reached before a
// turn of node n, and otherwise the most the turn may spend (0: no budget applies).
func (e *execution) checkBudgets(ctx context.Context, n *workflow.Node) (int64, error) {
	limits, err := e.limits(ctx, n)
	if err != nil {
		return 0, &nodeError{class: db.ClassInfra, msg: "could not read what the agent turns have spent: " + err.Error(),
			hint: "check the database"}
	}
	var remaining int64
	for i, l := range limits {
		if l.spent >= l.nanos {
			return 0, &budgetReached{pause: e.budgetPause(n, l)}
		}
		if left := l.nanos - l.spent; i == 0 || left < remaining {
			remaining = left
		}
	}
	return remaining, nil
}

// limits lists the budgets that apply to a turn of n, with what each has spent.
func (e *execution) limits(ctx context.Context, n *workflow.Node) ([]limit, error) {
	b := e.budgets()
	var out []limit
	if nodeMax, runMax := b.Nodes[n.ID], b.RunNanos; nodeMax > 0 || runMax != nil {
		sums, err := e.x.Store.AgentUsage(ctx, db.UsageQuery{By: db.UsageByNode, RunIDs: []string{e.run.ID}})
		if err != nil {
			return nil, err
		}
		if nodeMax > 0 {
			out = append(out, limit{what: "node " + n.ID, setting: "max_cost_usd of node " + n.ID, nanos: nodeMax,
				spent: db.UsageOf(sums, n.ID).CostNanos, scope: "its agent turns",
				raise: "raise `max_cost_usd` of node " + n.ID + " in the workflow file"})
		}
		if runMax != nil {
			var total db.UsageSum
			for _, s := range sums {
				total = total.Add(s)
			}
			out = append(out, limit{what: "run " + e.run.ID, setting: "the workflow's max_cost_usd", nanos: *runMax,
				spent: total.CostNanos, scope: "the run's agent turns",
				raise: "raise the workflow's `max_cost_usd` in its file"})
		}
	}
	if daily := e.x.DailyBudgetNanos; daily > 0 {
		sums, err := e.x.Store.AgentUsage(ctx, db.UsageQuery{Since: DayStart(e.x.now())})
		if err != nil {
			return nil, err
		}
		out = append(out, limit{what: "the bot", setting: DailyBudgetEnv, nanos: daily, spent: db.UsageOf(sums, "").CostNanos,
			scope: "the agent turns of every run today (UTC)",
			raise: "raise " + DailyBudgetEnv + " and restart the bot, or wait until midnight UTC"})
	}
	return out, nil
}

// DayStart is the start of the UTC day of t: the daily budget counts from it.
func DayStart(t time.Time) time.Time {
	y, m, d := t.UTC().Date()
	return time.Date(y, m, d, 0, 0, 0, 0, time.UTC)
}

// budgetPause is the recovery pause of a reached budget: which budget, what was spent, and how to
// continue. A resume reads the budgets again from the workflow file (budget_changed).
func (e *execution) budgetPause(n *workflow.Node, l limit) db.Pause {
	msg := fmt.Sprintf("The budget of %s is reached: %s is %s and %s have spent %s.", l.what, l.setting,
		db.FormatUSD(l.nanos), l.scope, db.FormatUSD(l.spent))
	hint := fmt.Sprintf("%s, then resume: a resume reads the budgets again. Or abandon the run.", l.raise)
	return db.Pause{Kind: db.PauseRecovery, Node: n.ID, Error: msg, ResumeHint: hint, Since: e.x.now()}
}

// recordUsage records what a turn used as the node's agent_usage event (attempt is the loop's
// iteration or the node's attempt) and counts it in the metrics. A failed record loses only the
// figure, never the turn's work: it is logged, and the lease's loss still stops the execution.
func (e *execution) recordUsage(ctx context.Context, p Provider, n *workflow.Node, attempt int, res agent.Result, err error) {
	u := res.Usage
	var ae *agent.Error
	switch {
	case err == nil:
	case errors.As(err, &ae) && ae.Usage != nil:
		u = *ae.Usage
	default:
		return // the CLI never reported a result: nothing was said about the turn's usage
	}
	if u.Provider == "" { // a provider that reports no usage at all: unknown, never zero
		u = db.AgentUsageData{Provider: p.Name(), Unknown: true}
	}
	if rerr := e.record(ctx, n.ID, attempt, u); rerr != nil {
		e.x.Log.Warn("orchestrator.usage_not_recorded", zap.String("run_id", e.run.ID), zap.String("node", n.ID), zap.Error(rerr))
		return
	}
	e.x.observer().AgentTurn(e.run.Workflow, u)
}

// runUsage is what the run's agent turns used so far; nil when it had none or it cannot be read
// (the message that needs it is owed all the same, without it).
func (e *execution) runUsage(ctx context.Context) *db.UsageSum {
	if processesOnly(e.wf) { // no node of it talks to an agent: nothing to read (a round trip at every end)
		return nil
	}
	sums, err := e.x.Store.AgentUsage(ctx, db.UsageQuery{RunIDs: []string{e.run.ID}})
	if err != nil {
		e.x.Log.Warn("orchestrator.usage_read_failed", zap.String("run_id", e.run.ID), zap.Error(err))
		return nil
	}
	if u := db.UsageOf(sums, ""); u.Turns > 0 {
		return &u
	}
	return nil
}

// budgetStopped is a turn the CLI itself stopped at the cap it was given (Claude Code's
// --max-budget-usd): the budget it stood for is reached, so the run pauses as it would before the
// next turn. The CLI's price list may differ a little from what was recorded: when no budget is
// reached by the recorded figures, the one with the least left is named.
func (e *execution) budgetStopped(ctx context.Context, n *workflow.Node, ae *agent.Error) error {
	if _, err := e.checkBudgets(ctx, n); err != nil {
		if b := (*budgetReached)(nil); errors.As(err, &b) {
			b.pause.Error += " " + ae.Msg + "."
		}
		return err
	}
	limits, err := e.limits(ctx, n)
	if err != nil || len(limits) == 0 {
		return ae
	}
	least := limits[0]
	for _, l := range limits[1:] {
		if l.nanos-l.spent < least.nanos-least.spent {
			least = l
		}
	}
	p := e.budgetPause(n, least)
	p.Error += " " + ae.Msg + "."
	return &budgetReached{pause: p}
}

// processesOnly reports whether every node of wf runs a process (bash, script): such a run has no
// agent turns. A run that failed before its workflow was read (nil) may have had some.
func processesOnly(wf *workflow.Workflow) bool {
	if wf == nil {
		return false
	}
	for _, n := range wf.Nodes {
		if n.Kind != workflow.KindBash && n.Kind != workflow.KindScript {
			return false
		}
	}
	return true
}
