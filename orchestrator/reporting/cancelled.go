package reporting

import (
	"threadflow/conversation"
	"threadflow/db"
)

// Cancellation is how a cancelled run was stopped, as its events record it: for a terminal that
// waited for the run while someone (or something) else stopped it, and must say who.
type Cancellation struct {
	By     conversation.Person // who cancelled it; ID db.TimeoutActor for a gate that timed out
	Reason string              // the rejection's reason, or what the cancel recorded ("abandoned")
	Gate   string              // the node whose gate was rejected; "" for an abandon or cancel
}

// LastCancellation reads the latest run_cancelled event of a run, and the gate rejection that
// recorded it, if one did.
func LastCancellation(events []db.Event) (Cancellation, bool) {
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Type != db.EventRunCancelled {
			continue
		}
		d := db.Decode[db.CancelData](events[i])
		c := Cancellation{By: conversation.Person{ID: d.By, Name: d.ByName}, Reason: d.Reason}
		// A rejection records gate_resolved and run_cancelled together, in that order.
		if i > 0 && events[i-1].Type == db.EventGateResolved && db.Decode[db.GateAnswerData](events[i-1]).Decision == db.DecisionReject {
			c.Gate = events[i-1].NodeID
		}
		return c, true
	}
	return Cancellation{}, false
}

// Cause says who stopped the run and why, to follow "was cancelled": "by alice (abandoned)", "by
// bob, who rejected `confirm`: not yet", "because nobody answered `confirm` within 1h".
func (c Cancellation) Cause() conversation.Text {
	switch {
	case c.By.ID == db.TimeoutActor && c.Gate != "":
		return conversation.T(conversation.P("because the gate at "), conversation.C(c.Gate), conversation.P(" timed out: "+c.Reason))
	case c.By.ID == db.TimeoutActor:
		return conversation.T(conversation.P("because its gate timed out: " + c.Reason))
	case c.By.ID == db.WorkflowActor:
		return conversation.T(conversation.P("by its workflow: "), conversation.U(c.Reason))
	case c.Gate != "":
		t := conversation.T(conversation.P("by "), c.By.Span(), conversation.P(", who rejected "), conversation.C(c.Gate))
		if c.Reason != "" {
			t = t.Append(conversation.P(": "), conversation.U(c.Reason))
		}
		return t
	}
	t := conversation.T(conversation.P("by "), c.By.Span())
	if c.Reason != "" {
		t = t.Append(conversation.P(" ("), conversation.U(c.Reason), conversation.P(")"))
	}
	return t
}

// CancelledText tells the people waiting for a run that it was cancelled, and by whom.
func CancelledText(run db.Run, c Cancellation) conversation.Text {
	t := conversation.T(conversation.P("🛑 Run "), conversation.C(run.ID), conversation.P(" of "), conversation.C(run.Workflow),
		conversation.P(" was cancelled "))
	return append(t, c.Cause()...).Append(conversation.P("."))
}
