package dispatch

import (
	"bytes"
	"context"

	"go.uber.org/zap"

	"threadflow/conversation"
	"threadflow/db"
	"threadflow/orchestrator/execution"
	"threadflow/workflow"
)

// rereadBudgets is the one part of a workflow file a resume reads again: its budgets. A run that
// paused at its max_cost_usd continues once the file raises it, while everything else the run does
// stays as frozen when it was created. Budgets that differ from the run's are recorded
// (budget_changed) before the resume; a file that is gone or no longer valid leaves them as they
// were, and so does a failed write (the run then pauses again at the same budget, saying so).
func (b *Dispatcher) rereadBudgets(ctx context.Context, m conversation.Message, run db.Run) {
	current, ok := b.Catalogs.Catalog().Get(run.Workflow)
	if !ok {
		return
	}
	events, err := b.Store.Events(ctx, run.ID)
	if err != nil {
		b.Log.Warn("orchestrator.budget_read_failed", zap.String("run_id", run.ID), zap.Error(err))
		return
	}
	was := execution.Fold(events).Budgets
	if was == nil {
		frozen, err := workflow.Parse("run "+run.ID, run.WorkflowSource)
		if err != nil {
			return
		}
		b := frozen.Budgets("")
		was = &b
	}
	now := current.Budgets(m.UserID)
	if sameBudgets(*was, now) {
		return
	}
	if _, err := b.Store.RecordBudget(ctx, run.ID, now); err != nil {
		b.Log.Warn("orchestrator.budget_not_recorded", zap.String("run_id", run.ID), zap.Error(err))
	}
}

func sameBudgets(a, b db.BudgetChangedData) bool {
	a.By, b.By = "", ""
	return bytes.Equal(db.MustJSON(a), db.MustJSON(b))
}
