package execution

import (
	"context"
	"strings"

	"threadflow/conversation"
	"threadflow/db"
	"threadflow/workflow"
)

// runCancel runs a cancel node (Archon's `cancel: "reason"`): the node completes with the reason
// as its output, then the run is cancelled with that reason, as a person's cancel would (its child
// runs with it), and the nodes still running stop. An intended stop, not a failure: the run is
// cancelled, not failed, and the thread and status say why.
func (e *execution) runCancel(ctx context.Context, n *workflow.Node, v workflow.Vars) (NodeOutput, error) {
	reason := strings.TrimSpace(workflow.Expand(n.CancelReason, v))
	out, err := e.saveOutput(n.ID, attemptLabel(v.Attempt), reason)
	if err != nil {
		return out, err
	}
	// Recorded before the cancel, and by itself: nothing depending on the node may start. Should
	// the cancel below not be written, the next execution finds the node completed and cancels
	// (cancelPending).
	if err := e.record(ctx, n.ID, v.Attempt, completedData(out, 0)); err != nil {
		return out, err
	}
	return out, e.cancelRun(ctx, n.ID, reason)
}

// cancelPending cancels the run for a cancel node that completed in an earlier execution whose
// cancel was never written (its worker died between the two); it reports whether one did.
func (e *execution) cancelPending(ctx context.Context) (bool, error) {
	for _, n := range e.wf.Nodes {
		if h := e.hist[n.ID]; n.Kind == workflow.KindCancel && h.state == workflow.StateCompleted {
			return true, e.cancelRun(ctx, n.ID, h.output.Text)
		}
	}
	return false, nil
}

// cancelRun cancels the run for its cancel node, tells its thread, and stops this execution.
func (e *execution) cancelRun(ctx context.Context, node, reason string) error {
	notice := Notice{Kind: NoticeCancelled, Text: cancelledText(e.run, node, reason), By: db.WorkflowActor}
	run, err := e.x.Store.CancelRun(ctx, e.run.ID, db.Actor{ID: db.WorkflowActor}, reason, e.owing(notice))
	if err != nil {
		err = e.interrupted(err)
		e.cancel(err)
		return err
	}
	notice.Run = run
	e.settled(ctx, notice)
	e.cancel(errAbandoned) // the run's nodes still running stop, and so does this execution
	return context.Cause(ctx)
}

// cancelledText tells the thread that a cancel node cancelled the run, and why.
func cancelledText(run db.Run, node, reason string) conversation.Text {
	return conversation.T(conversation.P("🛑 Run "), conversation.C(run.ID), conversation.P(" of "), conversation.C(run.Workflow),
		conversation.P(" was cancelled by its node "), conversation.C(node), conversation.P(": "), conversation.U(reason))
}
