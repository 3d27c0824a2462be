package web

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"time"

	"threadflow/db"
	"threadflow/orchestrator/reporting"
)

// usageWindow is how far back the usage page sums each workflow's agent usage.
const usageWindow = 30 * 24 * time.Hour

// workflowUsage is one workflow's line of the usage page.
type workflowUsage struct {
	Workflow string
	Cost     string
	Usage    string
}

type usagePageData struct {
	Since     time.Time
	Workflows []workflowUsage // costliest first
}

// usagePage sums each workflow's agent turns of the last usageWindow (one indexed query). It is a
// page of its own rather than a table on the runs page: a report over a month of history that the
// runs page, the dashboard's home and its most loaded view, paid a query for on every load
// (BENCHMARKS.md, issue 34).
func (s *Server) usagePage(w http.ResponseWriter, r *http.Request) {
	since := s.cfg.Now().Add(-usageWindow)
	sums, err := s.cfg.Store.AgentUsage(r.Context(), db.UsageQuery{By: db.UsageByWorkflow, Since: since})
	if err != nil {
		s.fail(w, fmt.Errorf("web: agent usage per workflow: %w", err))
		return
	}
	sort.SliceStable(sums, func(i, j int) bool { return sums[i].CostNanos > sums[j].CostNanos })
	data := usagePageData{Since: since, Workflows: make([]workflowUsage, 0, len(sums))}
	for _, u := range sums {
		data.Workflows = append(data.Workflows, workflowUsage{Workflow: u.Key, Cost: shortCost(u), Usage: reporting.UsageText(u)})
	}
	s.render(w, "usage.html", data)
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
