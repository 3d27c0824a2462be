package orchestrator

import (
	"time"

	"threadflow/db"
	"threadflow/workflow"
)

// NodeSummary is one node of a run as scripts and the dashboard see it: every node of the
// workflow, including those that have not started (pending), derived from the run's events.
type NodeSummary struct {
	ID        string
	State     workflow.NodeState
	DependsOn []string
	Attempts  int           // node_started events
	Duration  time.Duration // of its latest completion or final failure; 0 otherwise
	Reason    string        // why it was skipped, or its last error
	Output    NodeOutput    // of its latest completion
}

// NodeSummaries lists the nodes of run r: the nodes of the workflow the run froze at creation, in
// the order the file declares them, then any node the events name that the file does not (a run
// whose source cannot be parsed still shows what happened).
func NodeSummaries(r db.Run, events []db.Event) []NodeSummary {
	h := Fold(events)
	var out []NodeSummary
	seen := map[string]bool{}
	add := func(id string, deps []string) {
		seen[id] = true
		s := NodeSummary{ID: id, State: workflow.StatePending, DependsOn: deps}
		if n := h.nodes[id]; n != nil {
			s.State, s.Attempts, s.Duration, s.Reason, s.Output = n.state, n.starts, n.duration, n.reason, n.output
			if s.State == "" {
				s.State = workflow.StatePending
			}
		}
		out = append(out, s)
	}
	if wf, err := workflow.Parse(r.Workflow+".yaml", r.WorkflowSource); err == nil {
		for _, n := range wf.Nodes {
			add(n.ID, n.DependsOn)
		}
	}
	for _, id := range h.order {
		if !seen[id] {
			add(id, nil)
		}
	}
	return out
}
