package web

import (
	"context"
	"fmt"
	"sort"
	"time"

	"threadflow/db"
	"threadflow/orchestrator/reporting"
)

// usageWindow is how far back the runs page sums each workflow's agent usage.
const usageWindow = 30 * 24 * time.Hour

// workflowUsage is one workflow's line of the runs page's usage table.
type workflowUsage struct {
	Workflow string
	Cost     string
	Usage    string
}

// workflowUsage sums each workflow's agent turns of the last usageWindow (one indexed query).
func (s *Server) workflowUsage(ctx context.Context) ([]workflowUsage, error) {
	sums, err := s.cfg.Store.AgentUsage(ctx, db.UsageQuery{By: db.UsageByWorkflow, Since: s.cfg.Now().Add(-usageWindow)})
	if err != nil {
		return nil, fmt.Errorf("web: agent usage per workflow: %w", err)
	}
	sort.SliceStable(sums, func(i, j int) bool { return sums[i].CostNanos > sums[j].CostNanos })
	out := make([]workflowUsage, 0, len(sums))
	for _, u := range sums {
		out = append(out, workflowUsage{Workflow: u.Key, Cost: shortCost(u), Usage: reporting.UsageText(u)})
	}
	return out, nil
}

// runsUsage sums the agent turns of each listed run (one query for the page).
func (s *Server) runsUsage(ctx context.Context, runs []db.Run) ([]db.UsageSum, error) {
	if len(runs) == 0 {
		return nil, nil
	}
	ids := make([]string, len(runs))
	for i, r := range runs {
		ids[i] = r.ID
	}
	sums, err := s.cfg.Store.AgentUsage(ctx, db.UsageQuery{By: db.UsageByRun, RunIDs: ids})
	if err != nil {
		return nil, fmt.Errorf("web: agent usage of runs: %w", err)
	}
	return sums, nil
}

// nodesUsage fills in what the run's agent turns used, in all and per node.
func (s *Server) nodesUsage(ctx context.Context, d *runPageData) error {
	sums, err := s.cfg.Store.AgentUsage(ctx, db.UsageQuery{By: db.UsageByNode, RunIDs: []string{d.Run.ID}})
	if err != nil {
		return fmt.Errorf("web: agent usage of run %s: %w", d.Run.ID, err)
	}
	var total db.UsageSum
	d.NodeUsage = map[string]string{}
	for _, u := range sums {
		total = total.Add(u)
		d.NodeUsage[u.Key] = reporting.UsageText(u)
	}
	if total.Turns > 0 {
		d.Usage = reporting.UsageText(total)
	}
	return nil
}

// shortCost is a usage's cost for a table cell: "$0.0600", "≥ $0.04" when some turns are
// unpriced, "unknown" when none is priced, with "~" before an estimate.
func shortCost(u db.UsageSum) string {
	c := db.FormatUSD(u.CostNanos)
	switch {
	case u.UnpricedTurns == u.Turns:
		return "unknown"
	case u.UnpricedTurns > 0:
		c = "≥ " + c
	}
	if u.Estimated {
		c = "~" + c
	}
	return c
}
