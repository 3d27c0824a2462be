package execution

import (
	"strings"
	"time"

	"threadflow/db"
	"threadflow/workflow"
)

// runApproval completes the node when its gate was approved, and otherwise asks to pause at it with
// the gate's rules and timers frozen into the pause.
func (e *execution) runApproval(n *workflow.Node, v workflow.Vars, h *nodeHistory) (string, *db.Pause) {
	if h.gate != nil && h.gate.Decision != db.DecisionReject {
		return approvalOutput(n.Approval, h.gate), nil
	}
	msg := strings.TrimSpace(workflow.Expand(n.Approval.Message, v))
	p := &db.Pause{Kind: db.PauseApproval, Node: n.ID, Message: msg, CaptureResponse: n.Approval.CaptureResponse, Gate: gatePolicy(n.Approval)}
	p.Since = e.x.now()
	setGateTimers(p, n.Approval, p.Since)
	return "", p
}

// approvalOutput is what an approved gate's node outputs: with capture_response the approvers' notes
// (one line each when several approved), otherwise who approved it.
func approvalOutput(a *workflow.Approval, g *db.GateAnswerData) string {
	approvals := g.Approvals
	if len(approvals) == 0 {
		approvals = []db.GateApproval{{By: g.By, Text: g.Text}}
	}
	var parts []string
	for _, ap := range approvals {
		switch {
		case !a.CaptureResponse:
			parts = append(parts, ap.By)
		case ap.Text != "":
			parts = append(parts, ap.Text)
		}
	}
	if a.CaptureResponse {
		return strings.Join(parts, "\n")
	}
	return "approved by " + strings.Join(parts, " and ")
}

// gatePolicy is the workflow's rules for who may answer, as the store enforces them; nil when the
// gate has none (anyone allowed to use the bot answers alone).
func gatePolicy(a *workflow.Approval) *db.GatePolicy {
	if a.Policy.Plain() {
		return nil
	}
	p := a.Policy
	return &p
}

// setGateTimers sets when the gate times out, reminds and escalates, counted from now.
func setGateTimers(p *db.Pause, a *workflow.Approval, now time.Time) {
	if a.Timeout > 0 {
		p.DueAt, p.OnTimeout = now.Add(a.Timeout), string(a.OnTimeout)
	}
	if a.RemindAfter > 0 {
		p.RemindAt = now.Add(a.RemindAfter)
	}
	if a.EscalateAfter > 0 && a.Policy.Escalates() {
		p.EscalateAt = now.Add(a.EscalateAfter)
	}
}
