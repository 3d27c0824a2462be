package dispatch

import (
	"context"
	"errors"
	"strings"

	"go.uber.org/zap"

	"threadflow/conversation"
	"threadflow/db"
	"threadflow/orchestrator/reporting"
	"threadflow/workflow"
)

// inputsRefused says which inputs were refused and how to call the workflow; nothing was written.
func (b *Dispatcher) inputsRefused(ctx context.Context, m conversation.Message, wf *workflow.Workflow, err error) {
	var bad *workflow.InputError
	if !errors.As(err, &bad) {
		b.reply(ctx, m, conversation.T(conversation.P("Nothing was started: "), conversation.U(err.Error())))
		return
	}
	b.Log.Info("orchestrator.run_inputs_refused", zap.String("workflow", wf.Name), zap.String("user", MaskUser(m.UserID)), zap.Int("problems", len(bad.Problems)))
	t := conversation.T(conversation.P("Nothing was started: "))
	for i, p := range bad.Problems {
		if i > 0 {
			t = t.Append(conversation.P("; "))
		}
		t = t.Append(conversation.U(p.Msg))
	}
	b.reply(ctx, m, t.Append(conversation.P(".\nUsage: "), conversation.C(Usage(wf))))
}

// Usage is how to start wf with its inputs: `/workflow run NAME name=<accepts> ...`.
func Usage(wf *workflow.Workflow) string {
	parts := []string{"/workflow run", wf.Name}
	for _, in := range wf.Inputs {
		p := in.Name + "=<" + in.Accepts() + ">"
		if !in.Required || in.HasDefault {
			p = "[" + p + "]"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, " ")
}

// groupBusy refuses a run whose concurrency group another run holds, naming the holder.
func (b *Dispatcher) groupBusy(ctx context.Context, m conversation.Message, wf *workflow.Workflow, busy *db.GroupBusyError) {
	holder, err := b.Store.GetRun(ctx, busy.Holder)
	if err != nil {
		holder = db.Run{} // named by id alone
	}
	b.Log.Info("orchestrator.run_group_busy", zap.String("workflow", wf.Name), zap.String("holder", busy.Holder))
	t, buttons := reporting.GroupBusyText(wf.Name, busy, holder)
	b.reply(ctx, m, t, buttons...)
}
