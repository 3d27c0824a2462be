package web

import (
	"encoding/json"
	"slices"
	"strings"
	"time"

	"threadflow/db"
	"threadflow/orchestrator"
)

// nodeView is one node on the run page, folded from the run's events the way the orchestrator
// folds them (orchestrator/history.go): the events are the only record of node progress.
type nodeView struct {
	ID       string
	State    string // pending, running, completed, failed, skipped
	Attempts int
	Started  time.Time
	Finished time.Time
	Duration time.Duration
	Output   string
	Error    string
	Retries  []retryView // attempts that failed and were retried, since the latest resume
	Gate     *gateView
	Full     *orchestrator.OutputRef // the file holding the full output of the latest attempt
}

// Truncated reports whether Output shows only the beginning of the full output.
func (n *nodeView) Truncated() bool { return n.Full != nil && n.Full.Bytes > orchestrator.InlineLimit }

// retryView is an attempt that failed and was tried again, and why.
type retryView struct {
	Attempt int
	Reason  string
}

// gateView is a gate asked of a person: its rules and timers, the approvals so far and, once
// answered, who answered it and how.
type gateView struct {
	Node, Message      string
	AskedAt            time.Time
	Pause              db.Pause          // as asked: who may answer, how many approvals, timers
	Approvals          []db.GateApproval // counted approvals of a gate that needs several
	Decision, By, Text string
	TimedOut           bool
	ResolvedAt         time.Time
	Reminded           time.Time
}

// Required is how many distinct people must approve.
func (g *gateView) Required() int { return g.Pause.Gate.RequiredApprovals() }

// NoSelfApproval reports whether the run's requester may not approve.
func (g *gateView) NoSelfApproval() bool { return g.Pause.Gate != nil && g.Pause.Gate.NoSelfApproval }

// TimeoutOutcome is what happens when nobody answers in time.
func (g *gateView) TimeoutOutcome() string {
	if g.Pause.OnTimeout == db.TimeoutAbandon {
		return "the run is abandoned"
	}
	return "the gate is rejected"
}

// CanAnswer reports whether the page offers Approve and Reject.
func (v runView) CanAnswer() bool { return slices.Contains(v.Actions, "approve") }

// Who says who may answer the gate, for people.
func (g *gateView) Who() string {
	p := g.Pause.Gate
	if !p.Restricted() {
		return "anyone allowed to use the bot"
	}
	who := strings.Join(p.Approvers, ", ")
	if p.Admins {
		who = strings.TrimPrefix(who+" and the admins (ADMIN_USER_IDS)", " and ")
	}
	return who
}

// historyEntry is one step of the run's resume history: resumes, failed resumes, rescues.
type historyEntry struct {
	At   time.Time
	What string
	By   string
	Note string
}

// runView is everything the run page shows.
type runView struct {
	Run     db.Run
	State   string // orchestrator.DisplayState
	Nodes   []*nodeView
	Waiting *gateView // the gate the run waits on now
	Gates   []*gateView
	History []historyEntry
	Actions []string
}

// eventData is the union of the event payloads the run page reads.
type eventData struct {
	Output     string            `json:"output"`
	Error      string            `json:"error"`
	Reason     string            `json:"reason"`
	DurationMS *int64            `json:"duration_ms"`
	WillRetry  bool              `json:"will_retry"`
	Message    string            `json:"message"`
	Decision   string            `json:"decision"`
	By         string            `json:"by"`
	Text       string            `json:"text"`
	Approvals  []db.GateApproval `json:"approvals"`
	TimedOut   bool              `json:"timed_out"`
	From       string            `json:"from"`
	PrevOwner  string            `json:"prev_owner"`
}

// foldRun builds the run page's view of r from its events.
func foldRun(r db.Run, events []db.Event, now time.Time) runView {
	v := runView{Run: r, State: orchestrator.DisplayState(r, now), Actions: actions(r)}
	nodes := map[string]*nodeView{}
	for _, e := range events {
		var d eventData
		_ = json.Unmarshal(e.Data, &d) // payloads are written by the stores; a bad one reads as empty
		if e.NodeID == "" {
			v.applyRunEvent(nodes, e, d)
			continue
		}
		n := nodes[e.NodeID]
		if n == nil {
			n = &nodeView{ID: e.NodeID, State: "pending"}
			nodes[e.NodeID] = n
			v.Nodes = append(v.Nodes, n)
		}
		v.applyNodeEvent(n, e, d)
	}
	for _, ref := range orchestrator.OutputFiles(r, events) {
		if n := nodes[ref.Node]; n != nil {
			n.Full = &ref
		}
	}
	if p := r.Meta.Pause; r.Status == db.StatusPaused && p != nil && p.Kind.IsGate() && len(v.Gates) > 0 {
		if g := v.Gates[len(v.Gates)-1]; g.Node == p.Node && g.Decision == "" {
			v.Waiting = g
		}
	}
	return v
}

func (v *runView) applyNodeEvent(n *nodeView, e db.Event, d eventData) {
	switch e.Type {
	case db.EventNodeStarted:
		n.Attempts++
		n.State, n.Started, n.Finished, n.Duration = "running", e.At, time.Time{}, 0
	case db.EventNodeCompleted:
		n.State, n.Output, n.Error = "completed", d.Output, ""
		n.finish(e.At, d.DurationMS)
	case db.EventNodeFailed:
		n.Error = d.Error
		if d.WillRetry {
			n.Retries = append(n.Retries, retryView{Attempt: e.Attempt, Reason: d.Error})
		} else { // a retried attempt is not the node's end: it has no duration yet
			n.State = "failed"
			n.finish(e.At, d.DurationMS)
		}
	case db.EventNodeSkipped:
		n.State, n.Output = "skipped", d.Reason
		n.Finished, n.Duration = e.At, 0
	case db.EventResumeFailed: // recorded at the node the resume could not start
		n.Error = d.Error
		v.History = append(v.History, historyEntry{At: e.At, What: "resume failed at " + n.ID, Note: d.Error})
	case db.EventGateRequested:
		n.State = "waiting"
		n.Gate = &gateView{Node: n.ID, Message: d.Message, AskedAt: e.At}
		_ = json.Unmarshal(e.Data, &n.Gate.Pause)
		v.Gates = append(v.Gates, n.Gate)
	default:
		applyGateEvent(n, e, d)
	}
}

// applyGateEvent records approvals, reminders and the answer of the node's gate.
func applyGateEvent(n *nodeView, e db.Event, d eventData) {
	g := n.Gate
	if g == nil {
		return
	}
	switch e.Type {
	case db.EventGateApproval:
		g.Approvals = append(g.Approvals, db.GateApproval{By: d.By, Text: d.Text, At: e.At})
	case db.EventGateReminded:
		g.Reminded = e.At
	case db.EventGateResolved:
		g.Decision, g.By, g.Text, g.TimedOut, g.ResolvedAt = d.Decision, d.By, d.Text, d.TimedOut, e.At
		if len(d.Approvals) > 0 {
			g.Approvals = d.Approvals
		}
		if d.Decision != string(db.DecisionReject) {
			n.State = "completed"
		}
	}
}

func (n *nodeView) finish(at time.Time, ms *int64) {
	n.Finished, n.Duration = at, orchestrator.NodeDuration(ms, n.Started, at)
}

// applyRunEvent records the run-level events of the resume history. An explicit resume also
// reopens failed and skipped nodes, as the orchestrator does when it decides them again.
func (v *runView) applyRunEvent(nodes map[string]*nodeView, e db.Event, d eventData) {
	switch e.Type {
	case db.EventResumeRequested:
		for _, n := range nodes {
			if n.State == "failed" || n.State == "skipped" {
				n.State = "pending"
			}
			n.Retries = nil // a resume grants a fresh retry budget
		}
		v.History = append(v.History, historyEntry{At: e.At, What: "resumed", By: d.By, Note: "from " + d.From})
	case db.EventRunRescued:
		v.History = append(v.History, historyEntry{At: e.At, What: "rescued after its worker stopped", Note: d.PrevOwner})
	case db.EventRunCancelled:
		v.History = append(v.History, historyEntry{At: e.At, What: "cancelled", By: d.By, Note: d.Reason})
	}
}

// actions are the buttons the run's status allows. The orchestrator decides again when one is
// pressed; hiding the others only spares people a refusal.
func actions(r db.Run) []string {
	switch {
	case r.Status == db.StatusPaused && r.Meta.Pause != nil && r.Meta.Pause.Kind.IsGate():
		return []string{"approve", "reject", "abandon"}
	case r.Status == db.StatusPaused || r.Status == db.StatusFailed:
		return []string{"resume", "abandon"}
	case r.Status == db.StatusQueued || r.Status == db.StatusRunning:
		return []string{"abandon"}
	}
	return nil
}
