package maintenance

import (
	"context"
	"fmt"
	"strings"
	"time"

	"threadflow/db"
	"threadflow/workflow"
)

// FireLister reads a trigger's newest fires.
type FireLister interface {
	TriggerFires(ctx context.Context, trigger string, limit int) ([]db.TriggerFire, error)
}

// TriggerView is one trigger as people see it (`bot workflow triggers`, the dashboard's /triggers):
// what fires it, where its runs talk, its next and latest fires.
type TriggerView struct {
	Workflow string
	Trigger  *workflow.Trigger
	ID       string    // "<workflow>/<name>"
	Next     time.Time // schedules: the next time it fires (zero for deliveries)
	Fires    []db.TriggerFire
}

// Last is the newest fire, or nil.
func (v TriggerView) Last() *db.TriggerFire {
	if len(v.Fires) == 0 {
		return nil
	}
	return &v.Fires[0]
}

// What says what fires the trigger, in one line.
func (v TriggerView) What() string {
	t := v.Trigger
	switch t.Kind {
	case workflow.TriggerSchedule:
		return fmt.Sprintf("schedule %q in %s, overlap %s, catch_up %s", t.Cron, t.Location, t.Overlap, t.CatchUp)
	case workflow.TriggerGitHub:
		return fmt.Sprintf("GitHub %s at POST /hooks/%s (secret in %s)", strings.Join(t.Events, ", "), v.ID, t.SecretEnv)
	}
	return fmt.Sprintf("webhook at POST /hooks/%s (secret in %s)", v.ID, t.SecretEnv)
}

// Overview lists every trigger of the catalog's workflows with its newest fires (at most fires
// each), in workflow then trigger order.
func Overview(ctx context.Context, st FireLister, cat *workflow.Catalog, now time.Time, fires int) ([]TriggerView, error) {
	var out []TriggerView
	for _, wf := range cat.List() {
		for _, tr := range wf.Triggers {
			v := TriggerView{Workflow: wf.Name, Trigger: tr, ID: tr.ID(wf.Name), Next: tr.Next(now)}
			var err error
			if v.Fires, err = st.TriggerFires(ctx, v.ID, fires); err != nil {
				return nil, err
			}
			out = append(out, v)
		}
	}
	return out, nil
}
