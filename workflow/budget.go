package workflow

import (
	"strconv"

	"gopkg.in/yaml.v3"

	"threadflow/db"
)

// maxCost decodes `max_cost_usd`: a positive amount of dollars, kept as nanodollars.
func (d *decoder) maxCost(f field) int64 {
	var usd float64
	var err error
	if f.val.Kind == yaml.ScalarNode && (f.val.ShortTag() == "!!float" || f.val.ShortTag() == "!!int") {
		usd, err = strconv.ParseFloat(f.val.Value, 64)
	}
	nanos, cerr := db.USDNanos(usd)
	if f.val.Kind != yaml.ScalarNode || err != nil || cerr != nil || nanos <= 0 {
		d.errorf(f.val, "`max_cost_usd` must be an amount of US dollars more than 0, like 5 or 0.50, found %s", describe(f.val))
		return 0
	}
	return nanos
}

// Budgets are the workflow's max_cost_usd (for a whole run) and its nodes', as a resume records
// them when it reads the workflow file again (budget_changed).
func (w *Workflow) Budgets(by string) db.BudgetChangedData {
	b := db.BudgetChangedData{By: by}
	if w.MaxCostNanos > 0 {
		n := w.MaxCostNanos
		b.RunNanos = &n
	}
	for _, n := range w.Nodes {
		if n.MaxCostNanos > 0 {
			if b.Nodes == nil {
				b.Nodes = map[string]int64{}
			}
			b.Nodes[n.ID] = n.MaxCostNanos
		}
	}
	return b
}
