package web

import (
	"encoding/json"
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
	Gate     *gateView
}

// gateView is a gate asked of a person and, once answered, who answered it and how.
type gateView struct {
	Node, Message      string
	AskedAt            time.Time
	Decision, By, Text string
	ResolvedAt         time.Time
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
	Output     string `json:"output"`
	Error      string `json:"error"`
	Reason     string `json:"reason"`
	DurationMS int64  `json:"duration_ms"`
	WillRetry  bool   `json:"will_retry"`
	Message    string `json:"message"`
	Decision   string `json:"decision"`
	By         string `json:"by"`
	Text       string `json:"text"`
	From       string `json:"from"`
	PrevOwner  string `json:"prev_owner"`
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
		n.finish(e.At, d.DurationMS)
		if !d.WillRetry {
			n.State = "failed"
		}
	case db.EventNodeSkipped:
		n.State, n.Output = "skipped", d.Reason
		n.finish(e.At, 0)
	case db.EventResumeFailed: // recorded at the node the resume could not start
		n.Error = d.Error
		v.History = append(v.History, historyEntry{At: e.At, What: "resume failed at " + n.ID, Note: d.Error})
	case db.EventGateRequested:
		n.State = "waiting"
		n.Gate = &gateView{Node: n.ID, Message: d.Message, AskedAt: e.At}
		v.Gates = append(v.Gates, n.Gate)
	case db.EventGateResolved:
		if n.Gate != nil {
			n.Gate.Decision, n.Gate.By, n.Gate.Text, n.Gate.ResolvedAt = d.Decision, d.By, d.Text, e.At
		}
		if d.Decision != string(db.DecisionReject) {
			n.State = "completed"
		}
	}
}

func (n *nodeView) finish(at time.Time, ms int64) {
	n.Finished = at
	switch {
	case ms > 0:
		n.Duration = time.Duration(ms) * time.Millisecond
	case !n.Started.IsZero() && at.After(n.Started):
		n.Duration = at.Sub(n.Started)
	}
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
