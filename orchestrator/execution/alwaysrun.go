package execution

import "threadflow/workflow"

// alwaysRunAgain makes the always_run nodes that completed before the latest explicit resume
// pending again, so they run again (Archon's opt-out of resume caching), and, in Archon's files,
// the completed nodes whose upstream already ran again with another output (invalidateStale).
func (e *execution) alwaysRunAgain() {
	for _, n := range e.wf.Nodes {
		if h := e.hist[n.ID]; n.AlwaysRun && h.cachedByResume && h.state == workflow.StateCompleted {
			h.state = workflow.StatePending
		}
	}
	e.invalidateStale(e.wf.Nodes)
}

// invalidateStale makes pending again, in an Archon workflow, each of nodes that completed before
// the latest resume and has a dependency that completed since with another output than it had
// then (an always_run node that ran again, or one that had not completed): what it completed with
// was made from an output that is gone. Archon's engine does the same on resume (its stale-cache
// check, #2402); the nodes after such a node follow when it completes with another output in turn.
// Threadflow's own files keep a completed node's result on resume, as they always have.
func (e *execution) invalidateStale(nodes []*workflow.Node) {
	if !e.archonResumed() {
		return
	}
	for _, n := range nodes {
		if h := e.hist[n.ID]; h.cachedByResume && h.state == workflow.StateCompleted && e.upstreamChanged(n) {
			h.state = workflow.StatePending
		}
	}
}

// upstreamChanged reports whether a dependency of n completed after the latest resume with an
// output other than the one it had when the resume was asked for.
func (e *execution) upstreamChanged(n *workflow.Node) bool {
	for _, id := range n.DependsOn {
		d := e.hist[id]
		if !d.cachedByResume && d.state == workflow.StateCompleted && d.output.Text != d.resumeOutput {
			return true
		}
	}
	return false
}

// archonResumed reports whether this is an Archon workflow's run with nodes completed before an
// explicit resume: then a completed node may yet run again (invalidateStale).
func (e *execution) archonResumed() bool {
	if e.wf.Dialect != workflow.DialectArchon {
		return false
	}
	for _, h := range e.hist {
		if h.cachedByResume {
			return true
		}
	}
	return false
}

// unsettled reports whether node id completed before the latest resume and a node upstream of it
// has yet to run: its output may yet change under it, so the nodes after it must wait.
func (e *execution) unsettled(id string) bool {
	h := e.hist[id]
	if !h.cachedByResume || h.state != workflow.StateCompleted || e.wf.Dialect != workflow.DialectArchon {
		return false
	}
	for up := range e.graph.Upstream(e.wf.Node(id)) {
		if st := e.hist[up].state; st == workflow.StatePending || st == workflow.StateRunning {
			return true
		}
	}
	return false
}

// affected are the nodes to decide again once node id finished or was skipped: its dependents;
// in an Archon run resumed over completed nodes, every node, since a node whose output stays the
// same settles the nodes after the cached ones below it too (unsettled).
func (e *execution) affected(id string) []*workflow.Node {
	if e.archonResumed() {
		return e.wf.Nodes
	}
	return e.graph.Dependents(id)
}
