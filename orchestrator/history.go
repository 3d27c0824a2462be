package orchestrator

import (
	"time"

	"threadflow/db"
	"threadflow/workflow"
)

// nodeHistory is what the durable events say about one node. It is derived, never stored: resume
// rebuilds it from run_events, so a restarted worker and a fresh one see exactly the same state.
type nodeHistory struct {
	state        workflow.NodeState
	output       NodeOutput
	reason       string // skip reason or last error
	starts       int    // node_started events: the next attempt is starts+1
	skips        int    // node_skipped events: a node skipped again after a resume is a new record
	failures     int    // node_failed events since the latest explicit resume (the retry budget)
	started      time.Time
	finished     time.Time
	duration     time.Duration // NodeDuration of its latest completion or final failure; 0 otherwise
	retries      []retried     // attempts that failed and were retried, since the latest resume
	loopIter     int           // last completed loop iteration
	loopOutput   NodeOutput    // output of that iteration
	loopSession  string        // provider session after that iteration
	gateIter     int           // loop iteration the latest gate asked about
	gate         *gateAnswer
	justAnswered bool // the gate was answered after the node's latest start: that attempt continues
}

// retried is an attempt that failed and was tried again, and why: shown by /workflow status.
type retried struct {
	attempt int
	reason  string
}

// gateAnswer is the resolution of the node's latest gate, if it was answered.
type gateAnswer struct {
	Decision  db.GateDecision
	By        string
	Text      string
	Approvals []db.GateApproval // when the gate required several
}

// nodeOutput is the output a node event records.
func nodeOutput(d db.NodeData) NodeOutput {
	return NodeOutput{Text: d.Output, Bytes: d.OutputBytes, File: d.OutputPath}
}

// history folds a run's events into per-node state.
func history(events []db.Event) map[string]*nodeHistory {
	h := map[string]*nodeHistory{}
	get := func(id string) *nodeHistory {
		if h[id] == nil {
			h[id] = &nodeHistory{state: workflow.StatePending}
		}
		return h[id]
	}
	for _, e := range events {
		if e.Type == db.EventResumeRequested {
			// An explicit resume grants every node a fresh retry budget, and failed or skipped
			// nodes are decided again: the person fixed something.
			for _, n := range h {
				n.failures, n.retries = 0, nil
				if n.state == workflow.StateFailed || n.state == workflow.StateSkipped {
					n.state = workflow.StatePending
				}
			}
			continue
		}
		if e.NodeID == "" {
			continue
		}
		n := get(e.NodeID)
		applyEvent(n, e, db.Decode[db.NodeData](e))
	}
	return h
}

func applyEvent(n *nodeHistory, e db.Event, d db.NodeData) {
	switch e.Type {
	case db.EventNodeStarted:
		n.starts, n.justAnswered = n.starts+1, false
		n.state = workflow.StateRunning
		n.started, n.duration = e.At, 0
	case db.EventNodeCompleted:
		n.state, n.output, n.finished = workflow.StateCompleted, nodeOutput(d), e.At
		n.duration = NodeDuration(d.DurationMS, n.started, e.At)
	case db.EventNodeFailed:
		n.failures++
		n.reason, n.finished = d.Error, e.At
		if d.WillRetry {
			n.retries = append(n.retries, retried{attempt: e.Attempt, reason: d.Error})
		} else {
			n.state = workflow.StateFailed
			n.duration = NodeDuration(d.DurationMS, n.started, e.At)
		}
	case db.EventNodeSkipped:
		n.state, n.reason, n.finished, n.duration = workflow.StateSkipped, d.Reason, e.At, 0
		n.skips++
	case db.EventLoopIteration:
		n.loopIter, n.loopOutput, n.loopSession = e.Attempt, nodeOutput(d), d.SessionID
	case db.EventGateRequested:
		p := db.Decode[db.Pause](e)
		n.gate, n.gateIter = nil, p.LoopIteration
	case db.EventGateResolved:
		g := db.Decode[db.GateAnswerData](e)
		n.gate, n.justAnswered = &gateAnswer{Decision: g.Decision, By: g.By, Text: g.Text, Approvals: g.Approvals}, true
	}
}

// resumedNow reports whether the run was queued for this execution by an explicit resume, rather
// than created, rescued, handed back or let through a gate.
func resumedNow(events []db.Event) bool {
	queuedBy := db.EventRunCreated
	for _, e := range events {
		switch e.Type {
		case db.EventRunCreated, db.EventResumeRequested, db.EventRunRescued, db.EventRunReleased, db.EventGateResolved:
			queuedBy = e.Type
		}
	}
	return queuedBy == db.EventResumeRequested
}

// finished reports whether a node has reached a final state in this run.
func (n *nodeHistory) finishedState() bool {
	return n.state == workflow.StateCompleted || n.state == workflow.StateFailed || n.state == workflow.StateSkipped
}
