package orchestrator

import (
	"strings"
	"time"

	"threadflow/db"
	"threadflow/workflow"
)

// History is what a run's events say about the run. It is the one fold of run events: the executor
// resumes from it, /workflow status and the dashboard show it. It is derived, never stored: a
// restarted worker and a fresh one rebuild exactly the same state from run_events.
type History struct {
	nodes   map[string]*nodeHistory
	order   []string      // node ids in the order their first event was recorded
	Gates   []*GateRecord // every gate asked, in order
	Log     []LogEntry    // resumes, failed resumes, rescues and cancellation, in order
	Resumed bool          // the run was queued for its next execution by an explicit resume
}

// GateRecord is one gate asked of a person: its rules and timers as asked, the approvals so far,
// the reminder and, once answered, the answer.
type GateRecord struct {
	Node       string
	AskedAt    time.Time
	Pause      db.Pause          // as asked: who may answer, how many approvals, timers
	Approvals  []db.GateApproval // counted approvals of a gate that needs several
	Answer     *db.GateAnswerData
	ResolvedAt time.Time
	Reminded   time.Time
}

// LogEntry is one step of the run's own history: a resume, a failed resume, a rescue, the cancel.
type LogEntry struct {
	At   time.Time
	What string
	By   string
	Note string
}

// nodeHistory is what the durable events say about one node.
type nodeHistory struct {
	state        workflow.NodeState
	output       NodeOutput
	reason       string // skip reason or last error
	lastErr      string // the latest error, until the node completes
	shown        string // what the node showed last: its completed output or its skip reason
	starts       int    // node_started events: the next attempt is starts+1
	skips        int    // node_skipped events: a node skipped again after a resume is a new record
	failures     int    // node_failed events since the latest explicit resume (the retry budget)
	started      time.Time
	finished     time.Time          // its latest final outcome; zero while it runs
	duration     time.Duration      // NodeDuration of its latest completion or final failure; 0 otherwise
	retries      []retried          // attempts that failed and were retried, since the latest resume
	loopIter     int                // last completed loop iteration
	loopOutput   NodeOutput         // output of that iteration
	loopSession  string             // provider session after that iteration
	gateIter     int                // loop iteration the latest gate asked about
	gate         *db.GateAnswerData // the answer to the node's latest gate; nil until it is answered
	asked        *GateRecord        // the latest gate asked at the node, answered or not
	gatePhase    string             // "waiting" while its gate is asked, "completed" once let through; "" after
	justAnswered bool               // the gate was answered after the node's latest start: that attempt continues
}

// retried is an attempt that failed and was tried again, and why: shown by /workflow status.
type retried struct {
	attempt int
	reason  string
}

// nodeOutput is the output a node event records.
func nodeOutput(d db.NodeData) NodeOutput {
	return NodeOutput{Text: d.Output, Bytes: d.OutputBytes, File: d.OutputPath}
}

// Fold folds a run's events, oldest first.
func Fold(events []db.Event) *History {
	h := &History{nodes: map[string]*nodeHistory{}}
	queuedBy := db.EventRunCreated
	for _, e := range events {
		switch e.Type {
		case db.EventRunCreated, db.EventResumeRequested, db.EventRunRescued, db.EventRunReleased, db.EventGateResolved:
			queuedBy = e.Type
		}
		if e.NodeID == "" {
			h.applyRunEvent(e)
			continue
		}
		n := h.nodes[e.NodeID]
		if n == nil {
			n = &nodeHistory{state: workflow.StatePending}
			h.nodes[e.NodeID] = n
			h.order = append(h.order, e.NodeID)
		}
		h.applyNodeEvent(n, e)
	}
	h.Resumed = queuedBy == db.EventResumeRequested
	return h
}

// applyRunEvent folds an event of the run as a whole.
func (h *History) applyRunEvent(e db.Event) {
	switch e.Type {
	case db.EventResumeRequested:
		// An explicit resume grants every node a fresh retry budget, and failed or skipped
		// nodes are decided again: the person fixed something.
		for _, n := range h.nodes {
			n.failures, n.retries = 0, nil
			if n.state == workflow.StateFailed || n.state == workflow.StateSkipped {
				n.state = workflow.StatePending
			}
		}
		d := db.Decode[db.ResumeRequestedData](e)
		what := "resumed"
		if d.FreshWorkspace {
			// The workspace is new: every node runs again from the first. Attempts keep counting,
			// so the new attempts are new records.
			for _, n := range h.nodes {
				*n = nodeHistory{state: workflow.StatePending, starts: n.starts, skips: n.skips}
			}
			what = "resumed in a fresh workspace"
		}
		h.Log = append(h.Log, LogEntry{At: e.At, What: what, By: d.By, Note: "from " + string(d.From)})
	case db.EventRunRescued:
		h.Log = append(h.Log, LogEntry{At: e.At, What: "rescued after its worker stopped", Note: db.Decode[db.RunRescuedData](e).PrevOwner})
	case db.EventWorkspace:
		w := db.Decode[db.Workspace](e)
		what := "workspace made"
		switch {
		case w.Recreated:
			what = "workspace recreated from " + w.Remote
		case w.Replaced:
			what = "workspace made afresh: the one before never reached " + w.Remote
		}
		h.Log = append(h.Log, LogEntry{At: e.At, What: what, Note: strings.TrimPrefix(w.Host+": ", ": ") + w.Path})
	case db.EventRunCancelled:
		d := db.Decode[db.CancelData](e)
		h.Log = append(h.Log, LogEntry{At: e.At, What: "cancelled", By: d.By, Note: d.Reason})
	}
}

// applyNodeEvent folds an event of one node.
func (h *History) applyNodeEvent(n *nodeHistory, e db.Event) {
	switch e.Type {
	case db.EventNodeStarted, db.EventNodeCompleted, db.EventNodeFailed, db.EventNodeSkipped, db.EventLoopIteration, db.EventResumeFailed:
		applyEvent(n, e, db.Decode[db.NodeData](e))
		if e.Type == db.EventResumeFailed {
			h.Log = append(h.Log, LogEntry{At: e.At, What: "resume failed at " + e.NodeID, Note: n.lastErr})
		}
	case db.EventSessionReset:
		n.loopSession = "" // the provider said it is gone: no later resume may try it again
	case db.EventGateRequested:
		p := db.Decode[db.Pause](e)
		n.gate, n.gateIter, n.gatePhase = nil, p.LoopIteration, "waiting"
		n.asked = &GateRecord{Node: e.NodeID, AskedAt: e.At, Pause: p}
		h.Gates = append(h.Gates, n.asked)
	case db.EventGateResolved:
		g := db.Decode[db.GateAnswerData](e)
		n.gate, n.justAnswered = &g, true
		n.asked.resolve(g, e.At)
		if n.asked != nil && g.Decision != db.DecisionReject {
			n.gatePhase = "completed"
		}
	case db.EventGateApproval:
		if n.asked != nil {
			d := db.Decode[db.GateApprovalData](e)
			n.asked.Approvals = append(n.asked.Approvals, db.GateApproval{By: d.By, Name: d.ByName, Text: d.Text, At: e.At})
		}
	case db.EventGateReminded:
		if n.asked != nil {
			n.asked.Reminded = e.At
		}
	}
}

// resolve records the answer of a gate, if one was asked.
func (g *GateRecord) resolve(d db.GateAnswerData, at time.Time) {
	if g == nil {
		return
	}
	g.Answer, g.ResolvedAt = &d, at
	if len(d.Approvals) > 0 {
		g.Approvals = d.Approvals
	}
}

func applyEvent(n *nodeHistory, e db.Event, d db.NodeData) {
	switch e.Type {
	case db.EventNodeStarted:
		n.starts, n.justAnswered, n.gatePhase = n.starts+1, false, ""
		n.state = workflow.StateRunning
		n.started, n.finished, n.duration = e.At, time.Time{}, 0
	case db.EventNodeCompleted:
		n.state, n.output, n.finished, n.gatePhase = workflow.StateCompleted, nodeOutput(d), e.At, ""
		n.shown, n.lastErr = d.Output, ""
		n.duration = NodeDuration(d.DurationMS, n.started, e.At)
	case db.EventNodeFailed:
		n.failures++
		n.reason, n.lastErr = d.Error, d.Error
		if d.WillRetry { // a retried attempt is not the node's end: it has no duration yet
			n.retries = append(n.retries, retried{attempt: e.Attempt, reason: d.Error})
		} else {
			n.state, n.finished, n.gatePhase = workflow.StateFailed, e.At, ""
			n.duration = NodeDuration(d.DurationMS, n.started, e.At)
		}
	case db.EventNodeSkipped:
		n.state, n.reason, n.finished, n.duration = workflow.StateSkipped, d.Reason, e.At, 0
		n.shown, n.gatePhase = d.Reason, ""
		n.skips++
	case db.EventLoopIteration:
		n.loopIter, n.loopOutput, n.loopSession = e.Attempt, nodeOutput(d), d.SessionID
	case db.EventResumeFailed: // recorded at the node the resume could not start
		n.lastErr = d.Error
	}
}

// finished reports whether a node has reached a final state in this run.
func (n *nodeHistory) finishedState() bool {
	return n.state == workflow.StateCompleted || n.state == workflow.StateFailed || n.state == workflow.StateSkipped
}

// NodeView is one node as people see it on the dashboard: a copy, safe to keep.
type NodeView struct {
	ID       string
	State    string // pending, running, waiting (at its gate), completed, failed, skipped
	Attempts int
	Started  time.Time
	Finished time.Time // zero while it runs
	Duration time.Duration
	Output   string // its completed output or its skip reason, whichever came last
	Error    string // its latest error, until it completes
	Retries  []Retry
	Gate     *GateRecord // the latest gate asked at the node
}

// Retry is an attempt that failed and was tried again, and why.
type Retry struct {
	Attempt int
	Reason  string
}

// Nodes lists the nodes in the order their first event was recorded.
func (h *History) Nodes() []NodeView {
	out := make([]NodeView, 0, len(h.order))
	for _, id := range h.order {
		n := h.nodes[id]
		v := NodeView{ID: id, State: string(n.state), Attempts: n.starts, Started: n.started, Finished: n.finished,
			Duration: n.duration, Output: n.shown, Error: n.lastErr, Gate: n.asked}
		if n.gatePhase != "" { // between a gate's question and the node's next record
			v.State = n.gatePhase
		}
		for _, r := range n.retries {
			v.Retries = append(v.Retries, Retry{Attempt: r.attempt, Reason: r.reason})
		}
		out = append(out, v)
	}
	return out
}
