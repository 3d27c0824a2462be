package execution

import (
	"time"

	"threadflow/db"
	"threadflow/workflow"
)

// NodeView is one node of a run as every view shows it (`status --json`, the text status, the
// dashboard, the live status message), from the one fold of the run's events: a copy, safe to keep.
type NodeView struct {
	ID        string
	State     string   // pending, running, waiting, completed, failed, skipped, rejected, cancelled or not_run
	DependsOn []string // as the workflow file declares them; nil for a node the file does not declare
	Attempts  int      // node_started events
	Started   time.Time
	Finished  time.Time     // zero while it runs or has not run
	Duration  time.Duration // of its latest completion or final failure, or until the run stopped it
	Output    NodeOutput    // of its latest completion; for a cancelled node, what its stopped attempt printed
	Partial   bool          // Output is the file of an attempt that was stopped before it finished
	Shown     string        // its completed output or its skip reason, whichever came last
	Reason    string        // why it was skipped, rejected, cancelled or not run, or how it failed
	By        string        // who rejected or cancelled it: a platform-qualified id, or db.TimeoutActor
	ByName    string        // By's display name, "" when none was recorded
	Error     string        // its latest error, until it completes
	Retries   []Retry
	Gate      *GateRecord // the latest gate asked at the node
}

// Retry is an attempt that failed and was tried again, and why.
type Retry struct {
	Attempt int
	Reason  string
}

// RunNodes lists the nodes of run r from its events (History.Nodes).
func RunNodes(r db.Run, events []db.Event) []NodeView { return Fold(events).Nodes(r) }

// Nodes lists the nodes of run r, whose events h folded: the nodes of the workflow the run froze at
// creation, in the order the file declares them, then any node the events name that the file does
// not (a run whose source cannot be parsed still shows what happened).
func (h *History) Nodes(r db.Run) []NodeView {
	var out []NodeView
	seen := map[string]bool{}
	if wf, err := workflow.Parse(r.Workflow+".yaml", r.WorkflowSource); err == nil {
		for _, n := range wf.Nodes {
			seen[n.ID] = true
			out = append(out, h.view(r, n.ID, n.DependsOn))
		}
	}
	for _, id := range h.order {
		if !seen[id] {
			out = append(out, h.view(r, id, nil))
		}
	}
	return out
}

// view is one node as the fold leaves it: its events, the phase of a paused run, and what the
// run's stop made of it (close, in history.go).
func (h *History) view(r db.Run, id string, deps []string) NodeView {
	v := NodeView{ID: id, State: string(workflow.StatePending), DependsOn: deps}
	n := h.nodes[id]
	if n == nil {
		if h.end != nil {
			v.close(h.end.close(id, nil))
		}
		return v
	}
	v.State, v.Attempts, v.Started, v.Finished, v.Duration = string(n.state), n.starts, n.started, n.finished, n.duration
	v.Output, v.Shown, v.Reason, v.Error, v.Gate = n.output, n.shown, n.reason, n.lastErr, n.asked
	if n.gatePhase != "" { // between a pause at the node and its next record
		v.State = n.gatePhase
	}
	for _, rt := range n.retries {
		v.Retries = append(v.Retries, Retry{Attempt: rt.attempt, Reason: rt.reason})
	}
	if c := n.closed; c != nil {
		v.close(c)
		if c.state != NodeNotRun {
			v.Finished, v.Duration = c.at, NodeDuration(nil, n.started, c.at)
		}
		if ref, ok := partialOutput(r, id, n.starts); ok && c.state == NodeCancelled {
			v.Output, v.Partial = NodeOutput{Bytes: ref.Bytes, File: ref.File}, true
		}
	}
	return v
}

// close shows what the run's stop made of the node.
func (v *NodeView) close(c *closure) {
	if c != nil {
		v.State, v.Reason, v.By, v.ByName = c.state, c.reason, c.by, c.byName
	}
}
