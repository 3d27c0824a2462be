package db

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"
)

// Money is kept as an integer number of nanodollars (1e-9 USD): sums over thousands of turns stay
// exact, and a budget compares with what was spent without rounding surprises.
const NanosPerUSD int64 = 1_000_000_000

// maxUSD bounds any amount of money read from a CLI, a price table or a workflow file: more than a
// million dollars for one turn or budget is a mistake, and it keeps nanodollar sums far from
// overflowing int64.
const maxUSD = 1_000_000

// USDNanos converts dollars to nanodollars. NaN, infinities, negative amounts and amounts above a
// million dollars are refused.
func USDNanos(usd float64) (int64, error) {
	switch {
	case math.IsNaN(usd) || math.IsInf(usd, 0):
		return 0, fmt.Errorf("%v is not an amount of money", usd)
	case usd < 0:
		return 0, fmt.Errorf("%v is negative", usd)
	case usd > maxUSD:
		return 0, fmt.Errorf("%v is more than %d USD", usd, maxUSD)
	}
	return int64(math.Round(usd * float64(NanosPerUSD))), nil
}

// USD is nanodollars as dollars, for JSON and metrics.
func USD(nanos int64) float64 { return float64(nanos) / float64(NanosPerUSD) }

// FormatUSD writes nanodollars for people: cents for a dollar or more ($12.34), four decimals
// below it ($0.0200), and "<$0.0001" for a positive amount smaller than that.
func FormatUSD(nanos int64) string {
	switch {
	case nanos >= NanosPerUSD:
		return "$" + strconv.FormatFloat(USD(nanos), 'f', 2, 64)
	case nanos > 0 && nanos < NanosPerUSD/10_000:
		return "<$0.0001"
	}
	return "$" + strconv.FormatFloat(USD(nanos), 'f', 4, 64)
}

// AgentUsageData is the data of agent_usage: what one agent turn (a prompt node's turn, a loop
// iteration, a chat answer) used, as its CLI reported it. The event's node and attempt (a loop's
// iteration) say where; a trigger copies it into agent_turns in the event's own statement, so the
// sums per node, run and workflow are one indexed query (Store.AgentUsage).
type AgentUsageData struct {
	Provider string `json:"provider"`
	Model    string `json:"model,omitempty"`
	// Unknown: the CLI reported no usage (or figures that were refused): nothing below is known.
	// It is never recorded as zero.
	Unknown          bool  `json:"unknown,omitempty"`
	InputTokens      int64 `json:"input_tokens,omitempty"` // excluding the cache reads and writes below
	OutputTokens     int64 `json:"output_tokens,omitempty"`
	CacheReadTokens  int64 `json:"cache_read_tokens,omitempty"`
	CacheWriteTokens int64 `json:"cache_write_tokens,omitempty"`
	Turns            int64 `json:"turns,omitempty"` // model round trips the CLI counted (num_turns)
	// CostNanos is the cost in nanodollars: the CLI's own figure, or (Estimated) computed from the
	// price table; nil when neither is known (an unknown usage, a model the table does not list).
	CostNanos *int64 `json:"cost_nanos,omitempty"`
	Estimated bool   `json:"estimated,omitempty"`
	// Refused says why the CLI's figures were refused (negative, not a number); Unknown is set.
	Refused string `json:"refused,omitempty"`
}

// BudgetChangedData is the data of budget_changed: a resume read the run's budgets again from the
// workflow file as it is now (only the budgets: the rest of the run keeps its frozen workflow).
// From then on these replace the frozen ones.
type BudgetChangedData struct {
	By string `json:"by"`
	// RunNanos is the workflow's max_cost_usd, nil for none.
	RunNanos *int64 `json:"run_nanos,omitempty"`
	// Nodes are the max_cost_usd of the nodes that have one.
	Nodes map[string]int64 `json:"nodes,omitempty"`
}

func (AgentUsageData) EventType() EventType    { return EventAgentUsage }
func (BudgetChangedData) EventType() EventType { return EventBudgetChanged }

// UsageGroup says what AgentUsage sums by.
type UsageGroup string

// The groupings of AgentUsage. UsageTotal sums everything the query selects into one row.
const (
	UsageTotal      UsageGroup = ""
	UsageByRun      UsageGroup = "run_id"
	UsageByNode     UsageGroup = "node_id"
	UsageByWorkflow UsageGroup = "workflow"
)

// UsageQuery selects agent turns to sum.
type UsageQuery struct {
	By     UsageGroup
	RunIDs []string  // only these runs; empty: every run
	Since  time.Time // only turns recorded at or after; zero: all
}

// UsageSum is the usage of the agent turns of one group.
type UsageSum struct {
	Key   string // the run id, node id or workflow name (empty for UsageTotal)
	Turns int64  // agent turns recorded
	// UnknownTurns reported no usage; UnpricedTurns (which include them) have no known cost.
	UnknownTurns, UnpricedTurns                                  int64
	InputTokens, OutputTokens, CacheReadTokens, CacheWriteTokens int64
	ModelTurns                                                   int64 // the CLIs' num_turns, summed
	CostNanos                                                    int64 // of the priced turns
	Estimated                                                    bool  // some of CostNanos comes from the price table
}

// CostKnown reports whether CostNanos is the whole cost: every turn was priced.
func (u UsageSum) CostKnown() bool { return u.UnpricedTurns == 0 }

// Add sums two groups' usage (Key is u's).
func (u UsageSum) Add(o UsageSum) UsageSum {
	u.Turns += o.Turns
	u.UnknownTurns += o.UnknownTurns
	u.UnpricedTurns += o.UnpricedTurns
	u.InputTokens += o.InputTokens
	u.OutputTokens += o.OutputTokens
	u.CacheReadTokens += o.CacheReadTokens
	u.CacheWriteTokens += o.CacheWriteTokens
	u.ModelTurns += o.ModelTurns
	u.CostNanos += o.CostNanos
	u.Estimated = u.Estimated || o.Estimated
	return u
}

// UsageStore is the part of the Store that sums agent usage and records budget changes.
type UsageStore interface {
	// AgentUsage sums the agent turns q selects (agent_turns), one row per group, in key order.
	AgentUsage(ctx context.Context, q UsageQuery) ([]UsageSum, error)
	// RecordBudget records a budget_changed event on a paused or failed run (a resume re-read its
	// budgets); a run in any other status is a *TransitionError.
	RecordBudget(ctx context.Context, runID string, b BudgetChangedData) (Event, error)
}

// UsageOf finds key's sum in sums (a zero sum with that key when it has none).
func UsageOf(sums []UsageSum, key string) UsageSum {
	for _, s := range sums {
		if s.Key == key {
			return s
		}
	}
	return UsageSum{Key: key}
}

// opBudget names budget records in errors; recording one is not a state transition.
const opBudget Op = "record budget"

// RecordBudget appends b to a run that waits for a resume (paused or failed), holding the run's
// row, so it lands before the resume's own compare-and-set.
func (m *Machine) RecordBudget(ctx context.Context, runID string, b BudgetChangedData) (Event, error) {
	now := m.Now()
	var out Event
	err := m.Driver.InTx(ctx, func(tx DriverTx) error {
		run, err := tx.LockRun(ctx, runID)
		if err != nil {
			if errors.Is(err, ErrNotFound) {
				return &TransitionError{RunID: runID, Op: opBudget}
			}
			return fmt.Errorf("record budget of run %s: %w", runID, err)
		}
		if run.Status != StatusPaused && run.Status != StatusFailed {
			return &TransitionError{RunID: runID, Op: opBudget, Found: run.Status}
		}
		out, err = tx.AppendEvent(ctx, NewEvent(runID, "", 0, b, now))
		return err
	})
	return out, err
}

// AgentUsage sums the agent turns uq selects (Store.AgentUsage), on either engine.
func (m *Machine) AgentUsage(ctx context.Context, uq UsageQuery) ([]UsageSum, error) {
	q, args := m.Driver.Dialect().AgentUsage(uq)
	var out []UsageSum
	err := m.Driver.Query(ctx, q, args, func(scan func(...any) error) error {
		var u UsageSum
		var estimated int64
		err := scan(&u.Key, &u.Turns, &u.UnknownTurns, &u.UnpricedTurns, &u.InputTokens, &u.OutputTokens,
			&u.CacheReadTokens, &u.CacheWriteTokens, &u.ModelTurns, &u.CostNanos, &estimated)
		u.Estimated = estimated != 0
		out = append(out, u)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("agent usage: %w", err)
	}
	return out, nil
}

// AgentUsage renders the sum of the agent turns q selects (Machine.AgentUsage), its columns in
// UsageSum's order.
func (d Dialect) AgentUsage(uq UsageQuery) (string, []any) {
	q := d.Query()
	key := "''"
	if uq.By != UsageTotal {
		key = string(uq.By)
	}
	var conds []string
	if len(uq.RunIDs) > 0 {
		conds = append(conds, q.In("run_id", uq.RunIDs))
	}
	if !uq.Since.IsZero() {
		conds = append(conds, "at >= "+q.Time(uq.Since))
	}
	// Sums are cast back to BIGINT: PostgreSQL sums BIGINTs into NUMERIC.
	sum := func(col string) string { return "CAST(COALESCE(SUM(" + col + "), 0) AS BIGINT)" }
	s := "SELECT " + key + ", COUNT(*), " + sum("unknown") + ", COUNT(*) - COUNT(cost_nanos), " +
		sum("input_tokens") + ", " + sum("output_tokens") + ", " + sum("cache_read_tokens") + ", " +
		sum("cache_write_tokens") + ", " + sum("model_turns") + ", " + sum("cost_nanos") + ", " +
		"CAST(COALESCE(MAX(estimated), 0) AS BIGINT) FROM agent_turns" + whereAll(conds...)
	if uq.By != UsageTotal {
		s += " GROUP BY " + key + " ORDER BY " + key
	}
	return s, q.Args
}
