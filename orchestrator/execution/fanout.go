package execution

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"threadflow/db"
	"threadflow/workflow"
)

// fanOut is one attempt of a fan-out node: its items and what is known of each item's child run.
type fanOut struct {
	n     *workflow.Node
	items []string
	kids  []db.Run // kids[i].ID == "": item i's child is not started yet
	redo  []bool   // a failed child an explicit resume of the parent resumes, when a slot frees
}

// runFanOut runs a `workflow:` node with `fan_out`: one child run per item, the item its
// $ARGUMENTS, at most MaxParallel of them unfinished at once; the node waits until every child has
// ended (one ending never stops another) and then joins them (workflow.FanOut). Its children have
// ids derived from the parent's, the node's and the item's index (db.ChildRunID), so a takeover or
// resume of the parent finds the children it started and never starts one twice; cancelling the
// parent cancels them (db.Machine.CancelRun).
func (e *execution) runFanOut(ctx context.Context, n *workflow.Node, v workflow.Vars) (NodeOutput, error) {
	items, err := workflow.FanOutItems(workflow.Expand(n.FanOut.Items, v))
	if err != nil {
		return NodeOutput{}, &nodeError{class: db.ClassPermanent, msg: fmt.Sprintf("node %s: %v", n.ID, err)}
	}
	f := &fanOut{n: n, items: items, kids: make([]db.Run, len(items)), redo: make([]bool, len(items))}
	if err := e.findChildren(ctx, f); err != nil {
		return NodeOutput{}, err
	}
	if err := e.checkSharedCheckout(ctx, f); err != nil {
		return NodeOutput{}, err
	}
	lent := lender(ctx) // the run's worker slot, free for others while its children run (slot.go)
	defer lent.restore(ctx)
	for {
		if err := e.fillSlots(ctx, f); err != nil {
			return NodeOutput{}, err
		}
		if f.ended() {
			break
		}
		lent.lend()
		if err := e.x.sleep(ctx, e.x.childPoll()); err != nil {
			return NodeOutput{}, context.Cause(ctx)
		}
		if err := e.readUnfinished(ctx, f); err != nil {
			return NodeOutput{}, err
		}
	}
	if err := f.joinFailure(e.run.ID); err != nil {
		return NodeOutput{}, err
	}
	return e.saveOutput(n.ID, attemptLabel(v.Attempt), f.output())
}

// findChildren reads the children an earlier attempt of the node started, by their ids. A failed
// one is resumed when the parent was explicitly resumed (as a node without fan_out resumes its
// child), once a slot is free.
func (e *execution) findChildren(ctx context.Context, f *fanOut) error {
	for i := range f.items {
		child, err := e.x.Store.GetRun(ctx, db.ChildRunID(e.run.ID, f.n.ID, i))
		switch {
		case errors.Is(err, db.ErrNotFound):
			continue
		case err != nil:
			return fmt.Errorf("read child run of node %s item %d: %w", f.n.ID, i, err)
		}
		f.kids[i] = child
		f.redo[i] = child.Status == db.StatusFailed && e.resumed
	}
	return nil
}

// checkSharedCheckout refuses, before it starts any, children that would run at once in one live
// checkout (a child workflow with Archon's `worktree.enabled: false`) and may write to it, as
// Archon refuses them: they would change each other's files. Children in workspaces of their own
// never share one.
func (e *execution) checkSharedCheckout(ctx context.Context, f *fanOut) error {
	todo := 0
	for i, k := range f.kids {
		if k.ID == "" || f.redo[i] {
			todo++
		}
	}
	if min(todo, f.n.FanOut.MaxParallel) < 2 {
		return nil
	}
	wf, err := e.childWorkflow(ctx, f.n)
	if err != nil || !wf.LiveCheckout || wf.ReadsCheckoutOnly {
		return err
	}
	return &nodeError{class: db.ClassPermanent, msg: fmt.Sprintf("node %s: up to %d children of %s would run at once in the live checkout (REPO_PATH), and %s does not declare `mutates_checkout: false`",
		f.n.ID, min(todo, f.n.FanOut.MaxParallel), wf.Name, wf.Name),
		hint: "add `mutates_checkout: false` to " + wf.Name + " if it only reads the checkout, or set `fan_out.max_parallel: 1`, then resume"}
}

// fillSlots starts (or resumes) children in item order while fewer than MaxParallel are
// unfinished.
func (e *execution) fillSlots(ctx context.Context, f *fanOut) error {
	busy := f.unfinished()
	for i := 0; i < len(f.items) && busy < f.n.FanOut.MaxParallel; i++ {
		var err error
		switch {
		case f.kids[i].ID == "":
			item := f.items[i]
			f.kids[i], err = e.startChild(ctx, f.n, i, func(db.Run) string { return item })
		case f.redo[i]:
			f.redo[i] = false
			f.kids[i], err = e.resumeChild(ctx, f.kids[i].ID)
		default:
			continue
		}
		if err != nil {
			return err
		}
		busy++
	}
	return nil
}

// readUnfinished reads again the children that have not ended.
func (e *execution) readUnfinished(ctx context.Context, f *fanOut) error {
	for i, k := range f.kids {
		if k.ID == "" || childEnded(k.Status) {
			continue
		}
		child, err := e.readChild(ctx, k.ID)
		if err != nil {
			return err
		}
		f.kids[i] = child
	}
	return nil
}

// unfinished counts the children started that have not ended: what max_parallel bounds. A child
// paused at a gate is unfinished: it waits for a person in the thread, by its own run id.
func (f *fanOut) unfinished() int {
	busy := 0
	for _, k := range f.kids {
		if k.ID != "" && !childEnded(k.Status) {
			busy++
		}
	}
	return busy
}

// ended reports whether every item's child has ended, with none left to resume.
func (f *fanOut) ended() bool {
	for i, k := range f.kids {
		if k.ID == "" || f.redo[i] || !childEnded(k.Status) {
			return false
		}
	}
	return true
}

// joinFailure is why the node fails under `join: all_success`, naming the first child (in item
// order) that did not complete; nil when the join lets the node complete.
func (f *fanOut) joinFailure(parentID string) error {
	if f.n.FanOut.Join != workflow.JoinAllSuccess {
		return nil
	}
	for i, k := range f.kids {
		if ne := childFailure(parentID, k); ne != nil {
			ne.msg = fmt.Sprintf("node %s (fan_out, join: all_success): item %d's %s", f.n.ID, i, ne.msg)
			return ne
		}
	}
	return nil
}

// output is the node's output: a JSON array with one element per item, in item order
// (workflow.FanOutElement).
func (f *fanOut) output() string {
	var b strings.Builder
	b.WriteByte('[')
	for i, k := range f.kids {
		if i > 0 {
			b.WriteByte(',')
		}
		why := "child " + string(k.Status)
		if le := k.Meta.LastError; le != nil && k.Status == db.StatusFailed {
			why = le.Message
		}
		// Written as they are: json.Marshal would escape <, > and & in the children's outputs.
		b.Write(workflow.FanOutElement(k.Status == db.StatusCompleted, k.Meta.Output, string(k.Status), why, f.n.FanOut.FailedKey))
	}
	b.WriteByte(']')
	return b.String()
}
