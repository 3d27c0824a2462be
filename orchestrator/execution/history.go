package execution

import (
	"strings"
	"time"

	"threadflow/conversation"
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
	Log     []LogEntry    // resumes, failed resumes, rescues, cancellation, escalations and notifications, in order
	Resumed bool          // the run was queued for its next execution by an explicit resume
	end     *runEnd       // how the run ended for good (completed or cancelled); nil while it may go on
	// Budgets are the budgets the latest resume read again from the workflow file (budget_changed);
	// nil: the frozen workflow's.
	Budgets *db.BudgetChangedData
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

// LogEntry is one step of the run's own history: a resume, a failed resume, a rescue, the cancel,
// a gate's escalation, a notification.
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
	gatePhase    string             // shown instead of state: NodeWaiting while the run waits at it, "completed" once approved; "" after
	justAnswered bool               // the gate was answered after the node's latest start: that attempt continues
	closed       *closure           // what the run's stop made of the node it left open; nil otherwise
	// cachedByResume: it completed before the latest explicit resume and has not started since,
	// so an always_run node runs again (alwaysRunAgain), however many takeovers come between.
	cachedByResume bool
	resumeOutput   string // its output when the latest explicit resume was asked for (alwaysrun.go)
}

// retried is an attempt that failed and was tried again, and why: shown by /workflow status.
type retried struct {
	attempt int
	reason  string
}

// nodeOutput is the output a node event records.
func nodeOutput(d db.NodeOutputData) NodeOutput {
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
		if e.NodeID == "" || e.Type == db.EventRunFailed { // run_failed names the node that failed
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
	case db.EventBudgetChanged:
		b := db.Decode[db.BudgetChangedData](e)
		h.Budgets = &b
	case db.EventResumeRequested:
		// An explicit resume grants every node a fresh retry budget, and failed or skipped
		// nodes are decided again: the person fixed something.
		for _, n := range h.nodes {
			n.failures, n.retries, n.closed = 0, nil, nil
			n.cachedByResume, n.resumeOutput = n.state == workflow.StateCompleted, n.output.Text
			if n.state == workflow.StateFailed || n.state == workflow.StateSkipped {
				n.state = workflow.StatePending
			}
			if n.gatePhase == NodeWaiting { // a recovery pause is over: the run is queued again
				n.gatePhase = ""
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
		h.ended(h.cancellation(e.At, d))
	case db.EventNotified:
		what, note := Told(db.Decode[db.NotifiedData](e))
		h.Log = append(h.Log, LogEntry{At: e.At, What: what, Note: note})
	case db.EventRunCompleted:
		h.ended(&runEnd{kind: endCompleted, at: e.At})
	case db.EventRunFailed:
		h.failed(e.At, db.Decode[db.RunError](e))
	}
}

// applyNodeEvent folds an event of one node.
func (h *History) applyNodeEvent(n *nodeHistory, e db.Event) {
	switch e.Type {
	case db.EventNodeStarted, db.EventNodeCompleted, db.EventNodeFailed, db.EventNodeSkipped, db.EventLoopIteration,
		db.EventGateRequested, db.EventRunPaused:
		n.closed = nil // a worker's record after the run stopped: the store let a write through, and every view shows it
	}
	switch e.Type {
	case db.EventNodeStarted, db.EventNodeCompleted, db.EventNodeFailed, db.EventNodeSkipped, db.EventLoopIteration, db.EventResumeFailed:
		applyEvent(n, e)
		if e.Type == db.EventResumeFailed {
			h.Log = append(h.Log, LogEntry{At: e.At, What: "resume failed at " + e.NodeID, Note: n.lastErr})
		}
	case db.EventSessionReset:
		n.loopSession = "" // the provider said it is gone: no later resume may try it again
	case db.EventGateEscalated:
		h.Log = append(h.Log, LogEntry{At: e.At, What: "gate " + e.NodeID + " escalated", Note: Escalated(db.Decode[db.GateEscalatedData](e)) + " may answer too"})
	case db.EventGateRequested:
		p := db.Decode[db.Pause](e)
		n.gate, n.gateIter, n.gatePhase = nil, p.LoopIteration, NodeWaiting
		n.asked = &GateRecord{Node: e.NodeID, AskedAt: e.At, Pause: p}
		h.Gates = append(h.Gates, n.asked)
	case db.EventRunPaused: // a recovery pause at the node: it waits for a resume, unless it completed
		if n.state != workflow.StateCompleted {
			n.gatePhase = NodeWaiting
		}
	case db.EventGateResolved:
		g := db.Decode[db.GateAnswerData](e)
		n.gate, n.justAnswered = &g, true
		n.asked.resolve(g, e.At)
		switch {
		case g.Decision == db.DecisionReject: // the run_cancelled that follows closes the node
		case n.asked != nil && n.asked.Pause.Kind == db.PauseApproval:
			n.gatePhase = string(workflow.StateCompleted) // let through: its attempt completes when the run continues
		default:
			n.gatePhase = "" // a loop's answer: the loop runs on
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

func applyEvent(n *nodeHistory, e db.Event) {
	switch e.Type {
	case db.EventNodeStarted:
		n.starts, n.justAnswered, n.gatePhase, n.cachedByResume = n.starts+1, false, "", false
		n.state = workflow.StateRunning
		n.started, n.finished, n.duration = e.At, time.Time{}, 0
	case db.EventNodeCompleted:
		d := db.Decode[db.NodeCompletedData](e)
		n.state, n.output, n.finished, n.gatePhase = workflow.StateCompleted, nodeOutput(d.NodeOutputData), e.At, ""
		n.shown, n.lastErr = d.Output, ""
		n.duration = NodeDuration(d.DurationMS, n.started, e.At)
	case db.EventNodeFailed:
		d := db.Decode[db.NodeFailedData](e)
		n.failures++
		n.reason, n.lastErr = d.Error, d.Error
		if d.WillRetry { // a retried attempt is not the node's end: it has no duration yet
			n.retries = append(n.retries, retried{attempt: e.Attempt, reason: d.Error})
		} else {
			n.state, n.finished, n.gatePhase = workflow.StateFailed, e.At, ""
			n.duration = NodeDuration(d.DurationMS, n.started, e.At)
		}
	case db.EventNodeSkipped:
		d := db.Decode[db.NodeSkippedData](e)
		n.state, n.reason, n.finished, n.duration = workflow.StateSkipped, d.Reason, e.At, 0
		n.shown, n.gatePhase = d.Reason, ""
		n.skips++
	case db.EventLoopIteration:
		d := db.Decode[db.LoopIterationData](e)
		n.loopIter, n.loopOutput, n.loopSession = e.Attempt, nodeOutput(d.NodeOutputData), d.SessionID
	case db.EventResumeFailed: // recorded at the node the resume could not start
		n.lastErr = db.Decode[db.ResumeFailedData](e).Error
	}
}

// finishedState reports whether a node has reached a final state in this run.
func (n *nodeHistory) finishedState() bool {
	return n.state == workflow.StateCompleted || n.state == workflow.StateFailed || n.state == workflow.StateSkipped
}

// The states a node shows besides the scheduling states of workflow.NodeState (pending, running,
// completed, failed, skipped). status --json prints them (README, "Output for scripts"), so the set
// is only ever added to.
const (
	NodeWaiting   = "waiting"   // the paused run waits at it: its gate, or a resume after a failure a person must fix
	NodeRejected  = "rejected"  // its gate was rejected, by a person or by its timeout, which cancelled the run
	NodeCancelled = "cancelled" // it was running, or waiting at its gate, when the run was cancelled
	NodeNotRun    = "not_run"   // it never ran (or not again after a resume): the run ended first
)

// endKind says how a run ended for good.
type endKind int

const (
	endCompleted endKind = iota
	endCancelled         // by a person: /workflow cancel or abandon, the dashboard's buttons
	endRejected          // a person rejected the gate
	endTimedOut          // nobody answered the gate in time, and its timeout rejected it (on_timeout: reject)
	endAbandoned         // nobody answered the gate in time, and its timeout abandoned the run (on_timeout: abandon)
)

// runEnd is how a run ended for good, which decides what its open nodes show.
type runEnd struct {
	kind       endKind
	at         time.Time
	by, byName string // who cancelled the run: a platform-qualified id, or db.TimeoutActor
	gate       string // the gate whose rejection or timeout cancelled the run
	reason     string // the rejection's reason, or the timeout's ("nobody answered within 1h")
}

// closure is what a run's stop made of a node it left open: the state the node shows and why.
type closure struct {
	state, reason string
	by, byName    string // who rejected or cancelled it; "" for a node that did not run, or failed with the run
	at            time.Time
}

// cancellation reads a run_cancelled: a gate's rejection (recorded with it, just before), a gate's
// timeout that abandoned the run, or a person's cancel.
func (h *History) cancellation(at time.Time, d db.CancelData) *runEnd {
	end := &runEnd{kind: endCancelled, at: at, by: d.By, byName: d.ByName, reason: d.Reason}
	var g *GateRecord
	if len(h.Gates) > 0 {
		g = h.Gates[len(h.Gates)-1]
	}
	switch {
	case g != nil && g.Answer != nil && g.Answer.Decision == db.DecisionReject:
		end.kind, end.gate, end.reason = endRejected, g.Node, g.Answer.Text
		if g.Answer.TimedOut {
			end.kind = endTimedOut
		}
	case g != nil && g.Answer == nil && d.By == db.TimeoutActor:
		end.kind, end.gate = endAbandoned, g.Node
	}
	return end
}

// ended records the run's end and closes every node it left open. A node event recorded after it
// (which the store must never let through) opens the node again, so no view hides such a write.
func (h *History) ended(end *runEnd) {
	h.end = end
	for id, n := range h.nodes {
		n.closed = end.close(id, n)
		n.gatePhase = "" // the run waits for nothing any more
	}
}

// close is the one rule for what a run's end makes of a node (nil: one without events): a node that
// finished keeps its state; the gate whose rejection ended the run is rejected; a node that was
// running, or waiting at its gate, is cancelled; a node that never started (or not again since a
// resume) did not run, and says why. A completed run closes only the nodes that did not run: a node
// still running then would be a bug for every view to show.
func (end *runEnd) close(id string, n *nodeHistory) *closure {
	c := &closure{by: end.by, byName: end.byName, at: end.at}
	switch {
	case id == end.gate && (end.kind == endRejected || end.kind == endTimedOut):
		c.state, c.reason = NodeRejected, end.rejection()
	case n == nil || (n.state == workflow.StatePending && n.gatePhase != NodeWaiting):
		return &closure{state: NodeNotRun, reason: "not run: " + end.cause(), at: end.at}
	case n.finishedState() || end.kind == endCompleted:
		return nil
	default:
		c.state, c.reason = NodeCancelled, end.cancellation(id)
	}
	return c
}

// cause says why the nodes that did not run never did.
func (end *runEnd) cause() string {
	switch end.kind {
	case endCompleted:
		return "the run completed without it"
	case endRejected:
		return end.gate + " was rejected"
	case endTimedOut:
		return end.gate + " was rejected by its timeout"
	case endAbandoned:
		return "the run was abandoned by the timeout of " + end.gate
	}
	return "the run was cancelled"
}

// rejection says who rejected the gate, and why.
func (end *runEnd) rejection() string {
	if end.kind == endTimedOut {
		return end.reason + ": rejected by its timeout"
	}
	s := "rejected by " + end.who()
	if end.reason != "" {
		s += ": " + end.reason
	}
	return s
}

// cancellation says why a node that was running, or waiting at its gate, stopped.
func (end *runEnd) cancellation(id string) string {
	switch {
	case end.kind == endCancelled:
		return "cancelled by " + end.who()
	case end.kind == endAbandoned && id == end.gate:
		return end.reason + ": the run was abandoned by its timeout"
	}
	return "cancelled: " + end.cause()
}

func (end *runEnd) who() string {
	if end.by == db.WorkflowActor {
		return "its workflow (" + end.reason + ")"
	}
	return conversation.Person{ID: end.by, Name: end.byName}.Label()
}

// failed closes what a failed run left running. Nothing runs in a failed run: a node whose attempt
// never finished (its worker was lost MAX_RECOVERIES times) failed with the run. Nodes that did not
// start stay pending, since a resume may still run them, and a resume opens the node again.
func (h *History) failed(at time.Time, e db.RunError) {
	for _, n := range h.nodes {
		if n.state == workflow.StateRunning {
			n.closed = &closure{state: string(workflow.StateFailed), reason: "stopped when the run failed: " + e.Message, at: at}
			n.gatePhase = ""
		}
	}
}
