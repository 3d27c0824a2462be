package execution

import (
	"context"
	"errors"
	"fmt"
	"time"

	"threadflow/db"
	"threadflow/workflow"
)

// maxChildInput bounds a child run's arguments as MAX_ARGS_BYTES's ceiling bounds a person's: they
// reach its shell nodes' environment as $ARGUMENTS.
const maxChildInput = 100_000

// defaultChildPoll is how often a parent's `workflow:` node reads its child run's status.
const defaultChildPoll = time.Second

// runChild runs a `workflow:` node: it starts the node's child run, or finds the one it started
// (the child's id is derived from the parent's and the node's, db.ChildRunID), and waits for it.
// Nothing of the wait is only in memory: a takeover of the parent runs the node again, finds the
// child by its id and waits on. The child's final output is the node's output. A node with
// `fan_out` starts one child per item instead (fanout.go).
func (e *execution) runChild(ctx context.Context, n *workflow.Node, v workflow.Vars) (NodeOutput, error) {
	if n.FanOut != nil {
		return e.runFanOut(ctx, n, v)
	}
	child, err := e.startChild(ctx, n, -1, func(parent db.Run) string {
		if n.HasChildInput {
			return workflow.Expand(n.ChildInput, v)
		}
		return parent.UserMessage
	})
	if err != nil {
		return NodeOutput{}, err
	}
	// An explicit resume of the parent resumes the child that failed it, once, here; a takeover
	// never does: a failed child waits for a person as any failed run does.
	if child.Status == db.StatusFailed && e.resumed {
		if child, err = e.resumeChild(ctx, child.ID); err != nil {
			return NodeOutput{}, err
		}
	}
	lent := lender(ctx) // the run's worker slot, free for others while the child runs (slot.go)
	defer lent.restore(ctx)
	for !childEnded(child.Status) {
		lent.lend()
		if err := e.x.sleep(ctx, e.x.childPoll()); err != nil {
			return NodeOutput{}, context.Cause(ctx)
		}
		if child, err = e.readChild(ctx, child.ID); err != nil {
			return NodeOutput{}, err
		}
	}
	if err := childFailure(e.run.ID, child); err != nil {
		return NodeOutput{}, err
	}
	return e.saveOutput(n.ID, attemptLabel(v.Attempt), child.Meta.Output)
}

// childEnded reports whether a child run has ended as far as its parent's node is concerned:
// completed, cancelled, or failed (which a person may resume, through the parent).
func childEnded(s db.Status) bool {
	return s == db.StatusCompleted || s == db.StatusFailed || s == db.StatusCancelled
}

// childFailure is the node error of a child that ended without completing, nil for one that
// completed.
func childFailure(parentID string, child db.Run) *nodeError {
	switch child.Status {
	case db.StatusFailed:
		return &nodeError{class: db.ClassPermanent, msg: fmt.Sprintf("child run %s (workflow %s) %s", child.ID, child.Workflow, childWhy(child)),
			hint: "fix what failed it, then resume this run: /workflow resume " + parentID + " resumes the child too"}
	case db.StatusCancelled:
		return &nodeError{class: db.ClassPermanent, msg: fmt.Sprintf("child run %s (workflow %s) %s", child.ID, child.Workflow, childWhy(child))}
	}
	return nil
}

// childWhy says how a child that did not complete ended.
func childWhy(child db.Run) string {
	if child.Status == db.StatusCancelled {
		return "was cancelled"
	}
	if le := child.Meta.LastError; le != nil {
		return "failed: " + le.Message
	}
	return "failed"
}

func (e *execution) resumeChild(ctx context.Context, id string) (db.Run, error) {
	child, err := e.x.Store.ResumeRun(ctx, id, e.resumedBy)
	if err != nil {
		return db.Run{}, fmt.Errorf("resume child run %s: %w", id, err)
	}
	e.x.wakeWorkers()
	return child, nil
}

func (e *execution) readChild(ctx context.Context, id string) (db.Run, error) {
	child, err := e.x.Store.GetRun(ctx, id)
	if err != nil {
		return db.Run{}, fmt.Errorf("read child run %s: %w", id, err)
	}
	return child, nil
}

// startChild creates the node's child run for item (-1: a node without fan_out) in the parent's
// thread, with the parent's requester and args(parent) as its arguments, or reads the one an
// earlier attempt of the node created.
func (e *execution) startChild(ctx context.Context, n *workflow.Node, item int, args func(parent db.Run) string) (db.Run, error) {
	id := db.ChildRunID(e.run.ID, n.ID, item)
	child, err := e.x.Store.GetRun(ctx, id)
	if err == nil || !errors.Is(err, db.ErrNotFound) {
		return child, err
	}
	wf, err := e.childWorkflow(ctx, n)
	if err != nil {
		return db.Run{}, err
	}
	r, err := e.x.Store.GetRun(ctx, e.run.ID) // the conversation it is in now: its thread may have opened since it was claimed
	if err != nil {
		return db.Run{}, fmt.Errorf("read run %s: %w", e.run.ID, err)
	}
	a := args(r)
	if len(a) > maxChildInput {
		return db.Run{}, &nodeError{class: db.ClassPermanent, msg: fmt.Sprintf("node %s would give its child run %d bytes of arguments, more than the %d a run takes; pass less in `input` (or in each fan_out item), or a file path", n.ID, len(a), maxChildInput)}
	}
	if err := wf.CheckArgs(a); err != nil {
		return db.Run{}, &nodeError{class: db.ClassPermanent, msg: fmt.Sprintf("node %s: the child workflow %s refuses its arguments: %v", n.ID, wf.Name, err)}
	}
	child, err = e.x.Store.CreateRun(ctx, db.NewRun{ID: id, Workflow: wf.Name, ConversationID: r.ConversationID, ParentConversationID: r.ParentConversationID,
		UserID: r.UserID, UserName: r.UserName, UserMessage: a, WorkingPath: e.x.Dirs.WorkPath(id), WorkflowSource: wf.Source,
		ParentRunID: r.ID, ParentNode: n.ID, Owe: e.x.nested(db.Run{ID: id, Workflow: wf.Name, ParentRunID: r.ID, ParentNode: n.ID})})
	if errors.Is(err, db.ErrDuplicate) { // an attempt that lost its lease created it meanwhile
		return e.x.Store.GetRun(ctx, id)
	}
	if err == nil {
		e.x.wakeWorkers()
	}
	return child, err
}

// childWorkflow is the workflow the node's children run, from the current catalog, once the run
// may nest one deeper.
func (e *execution) childWorkflow(ctx context.Context, n *workflow.Node) (*workflow.Workflow, error) {
	if err := e.checkDepth(ctx); err != nil {
		return nil, err
	}
	if e.x.Workflows == nil {
		return nil, &nodeError{class: db.ClassInfra, msg: fmt.Sprintf("node %s starts a child run, and this bot has no workflow catalog to find %s in", n.ID, n.Workflow)}
	}
	wf, err := e.x.Workflows(n.Workflow)
	if err != nil {
		return nil, &nodeError{class: db.ClassPermanent, msg: fmt.Sprintf("node %s: %v", n.ID, err),
			hint: "add the workflow to WORKFLOWS_DIR (bot workflow validate says why a file is not loaded), then resume"}
	}
	return wf, nil
}

// checkDepth refuses a child beyond workflow.MaxChildDepth nested runs.
func (e *execution) checkDepth(ctx context.Context) error {
	depth, parent := 1, e.run.ParentRunID
	for ; parent != ""; depth++ {
		if depth >= workflow.MaxChildDepth {
			return &nodeError{class: db.ClassPermanent, msg: fmt.Sprintf("runs nest at most %d deep; run %s would start one deeper (do two workflows start each other?)", workflow.MaxChildDepth, e.run.ID)}
		}
		p, err := e.x.Store.GetRun(ctx, parent)
		if err != nil {
			return fmt.Errorf("read parent run %s: %w", parent, err)
		}
		parent = p.ParentRunID
	}
	return nil
}

func (x *Executor) childPoll() time.Duration {
	if x.ChildPoll > 0 {
		return x.ChildPoll
	}
	return defaultChildPoll
}

func (x *Executor) wakeWorkers() {
	if x.WakeWorkers != nil {
		x.WakeWorkers()
	}
}
