package web

import (
	"slices"
	"strings"
	"time"

	"threadflow/db"
	"threadflow/orchestrator/execution"
	"threadflow/orchestrator/reporting"
)

// nodeView is one node on the run page, from the orchestrator's fold of the run's events: the
// events are the only record of node progress.
type nodeView struct {
	ID        string
	State     string // execution.NodeView's: pending, running, waiting, completed, failed, skipped, rejected, cancelled, not_run
	DependsOn []string
	Attempts  int
	Started   time.Time
	Finished  time.Time
	Duration  time.Duration
	Output    string // its completed output or its skip reason, whichever came last
	Reason    string // why it was skipped, rejected, cancelled or not run
	Error     string
	Retries   []retryView // attempts that failed and were retried, since the latest resume
	Gate      *gateView
	Full      *execution.OutputRef // the file holding the output of the latest attempt (execution.OutputFiles)
}

// Truncated reports whether Output shows only the beginning of the full output.
func (n *nodeView) Truncated() bool {
	return n.Full != nil && n.Full.Partial == "" && n.Full.Bytes > execution.InlineLimit
}

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
	ByName             string // By's display name, "" when none was recorded
	TimedOut           bool
	ResolvedAt         time.Time
	Reminded           time.Time
}

// Required is how many distinct people must approve.
func (g *gateView) Required() int { return g.Pause.Gate.RequiredApprovals() }

// AllowSelfApproval reports whether the run's requester may approve.
func (g *gateView) AllowSelfApproval() bool { return g.Pause.Gate.AllowsSelfApproval() }

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
	State   string // reporting.DisplayState
	Nodes   []*nodeView
	Waiting *gateView // the gate the run waits on now
	Gates   []*gateView
	History []historyEntry
	Actions []string
}

// foldRun builds the run page's view of r from its events, through the orchestrator's one fold of
// run events (execution.Fold), so the page and /workflow status never disagree about a node:
// every node of the workflow, in file order.
func foldRun(r db.Run, events []db.Event, now time.Time) runView {
	v := runView{Run: r, State: reporting.DisplayState(r, now), Actions: actions(r)}
	h := execution.Fold(events)
	gates := map[*execution.GateRecord]*gateView{}
	for _, g := range h.Gates {
		gates[g] = newGateView(g)
		v.Gates = append(v.Gates, gates[g])
	}
	nodes := map[string]*nodeView{}
	for _, n := range h.Nodes(r) {
		nv := &nodeView{ID: n.ID, State: n.State, DependsOn: n.DependsOn, Attempts: n.Attempts, Started: n.Started,
			Finished: n.Finished, Duration: n.Duration, Output: n.Shown, Reason: n.Reason, Error: n.Error, Gate: gates[n.Gate]}
		for _, rt := range n.Retries {
			nv.Retries = append(nv.Retries, retryView{Attempt: rt.Attempt, Reason: rt.Reason})
		}
		nodes[n.ID] = nv
		v.Nodes = append(v.Nodes, nv)
	}
	for _, e := range h.Log {
		v.History = append(v.History, historyEntry{At: e.At, What: e.What, By: e.By, Note: e.Note})
	}
	for _, ref := range execution.OutputFiles(r, events) {
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

// newGateView is the page's view of one gate.
func newGateView(g *execution.GateRecord) *gateView {
	v := &gateView{Node: g.Node, Message: g.Pause.Message, AskedAt: g.AskedAt, Pause: g.Pause,
		Approvals: g.Approvals, Reminded: g.Reminded, ResolvedAt: g.ResolvedAt}
	if a := g.Answer; a != nil {
		v.Decision, v.By, v.ByName, v.Text, v.TimedOut = string(a.Decision), a.By, a.ByName, a.Text, a.TimedOut
	}
	return v
}

// actions are the buttons the run's status allows. The orchestrator decides again when one is
// pressed; hiding the others only spares people a refusal.
func actions(r db.Run) []string {
	switch {
	case r.Status == db.StatusPaused && r.Meta.Pause != nil && r.Meta.Pause.Kind.IsGate():
		return []string{"approve", "reject", "abandon"}
	case r.Status == db.StatusPaused && r.Meta.Pause != nil && r.Meta.Pause.WorkspaceLost:
		return []string{actionFresh, "abandon"} // a plain resume cannot continue it
	case r.Status == db.StatusPaused && r.Meta.Pause != nil && r.Meta.Pause.WorkspaceUnreachable:
		return []string{"resume", actionFresh, "abandon"} // its remote may answer again, or be given up on
	case r.Status == db.StatusPaused || r.Status == db.StatusFailed:
		return []string{"resume", "abandon"}
	case r.Status == db.StatusQueued || r.Status == db.StatusRunning:
		return []string{"cancel"} // stops it; abandon is for a run that stopped on its own
	}
	return nil
}
