package storetest

import (
	"errors"
	"testing"
	"time"

	"threadflow/db"
)

// Gate escalation and notifications (issue 29): escalation is a gate timer that widens who may
// answer; a direct message is an owed row like any other, and its delivery records who it reached.

// escalating pauses a run at a gate whose approver is slack:alice, reminding after 20 minutes,
// escalating to slack:group:S1 and the admins after 30 and timing out after an hour.
func escalating(p *db.Pause) {
	p.Gate = &db.GatePolicy{Approvers: []string{"slack:alice"}, AllowSelfApproval: true, Notify: db.NotifyDM,
		EscalateTo: []string{"slack:group:S1"}, EscalateAdmins: true}
	p.RemindAt, p.EscalateAt = p.Since.Add(20*time.Minute), p.Since.Add(30*time.Minute)
	p.DueAt, p.OnTimeout = p.Since.Add(time.Hour), db.TimeoutReject
}

func testEscalationAfterTheReminder(t *testing.T, e *env) {
	r := e.pausedWith(t, escalating)
	carol := db.GateResolution{RunID: r.ID, Decision: db.DecisionApprove, By: "slack:carol", MemberOf: []string{"slack:group:S1"}}
	if _, err := e.s.ResolveGate(e.ctx, carol); !refusedFor(err, db.RefusedNotApprover) {
		t.Fatalf("a member of escalate_to before the escalation: %v, want refused as not an approver", err)
	}
	// Both the reminder and the escalation are due: the reminder fires first, the escalation at
	// the next pass, once.
	e.clock.Advance(35 * time.Minute)
	if got := fire(t, e); len(got) != 1 || got[0].Kind != db.TimerReminder {
		t.Fatalf("first pass fired %+v, want the reminder", got)
	}
	if next, ok, err := e.s.NextGateTimer(e.ctx, db.Reach{}); err != nil || !ok || !next.Equal(r.Meta.Pause.EscalateAt) {
		t.Fatalf("NextGateTimer after the reminder = %v %v %v, want the escalation at %v", next, ok, err, r.Meta.Pause.EscalateAt)
	}
	got := fire(t, e)
	if len(got) != 1 || got[0].Kind != db.TimerEscalation || got[0].Run.Status != db.StatusPaused || !got[0].Pause.Escalated ||
		got[0].Run.Meta.Pause == nil || !got[0].Run.Meta.Pause.Escalated {
		t.Fatalf("second pass fired %+v, want the escalation, the run still paused and its gate escalated", got)
	}
	if again := fire(t, e); len(again) != 0 {
		t.Fatalf("the escalation fired again: %+v", again)
	}
	if n := e.countEvents(t, r.ID, db.EventGateEscalated); n != 1 {
		t.Fatalf("%d gate_escalated events, want 1", n)
	}
	if ev := e.last(t, r.ID); ev.Type != db.EventGateEscalated || ev.NodeID != "review" || dataField(t, ev, "admins") != true {
		t.Fatalf("escalation recorded as %s %s at %q", ev.Type, ev.Data, ev.NodeID)
	}
	if next, _, err := e.s.NextGateTimer(e.ctx, db.Reach{}); err != nil || !next.Equal(r.Meta.Pause.DueAt) {
		t.Fatalf("after the escalation NextGateTimer = %v, %v, want the timeout at %v", next, err, r.Meta.Pause.DueAt)
	}
	if _, err := answer(e, r.ID, db.DecisionApprove, "slack:dave", false); !refusedFor(err, db.RefusedNotApprover) {
		t.Fatalf("someone named nowhere after the escalation: %v, want refused", err)
	}
	res, err := e.s.ResolveGate(e.ctx, carol)
	if err != nil || !res.Resolved || res.Run.Status != db.StatusQueued {
		t.Fatalf("a member of escalate_to after the escalation: %+v, %v; want the gate approved", res, err)
	}
}

func testEscalatedAdminAnswers(t *testing.T, e *env) {
	r := e.pausedWith(t, escalating)
	if _, err := answer(e, r.ID, db.DecisionReject, "slack:admin", true); !refusedFor(err, db.RefusedNotApprover) {
		t.Fatalf("an admin before the escalation: %v, want refused (the gate lists no @admins)", err)
	}
	e.clock.Advance(30 * time.Minute)
	fire(t, e) // the reminder
	fire(t, e) // the escalation
	if res, err := answer(e, r.ID, db.DecisionReject, "slack:admin", true); err != nil || res.Run.Status != db.StatusCancelled {
		t.Fatalf("an admin after escalating to @admins: %+v, %v; want the gate rejected", res, err)
	}
}

func testDirectOwedAndRecorded(t *testing.T, e *env) {
	r := e.create(t, nil)
	if err := e.s.Owe(e.ctx, r.ID, owed("direct", "dm", db.TargetDirect, "")); err != nil {
		t.Fatalf("Owe a direct message: %v", err) // the outbox takes target direct (migration 00012)
	}
	x := e.claimOwed(t, courier, "dm")[0]
	if x.Target != db.TargetDirect {
		t.Fatalf("claimed %+v, want the direct message", x)
	}
	told := db.NewEvent(r.ID, "", 0, db.NotifiedData{About: "gate", How: db.NotifyDM, To: []string{"slack:U1"}, Skipped: []string{"slack:U2"}}, time.Time{})
	if err := e.s.DeliveredOwed(e.ctx, db.Delivery{RunID: r.ID, Key: x.Key, Version: x.Version, Owner: courier, Events: []db.Event{told}}); err != nil {
		t.Fatalf("DeliveredOwed: %v", err)
	}
	ev := e.last(t, r.ID)
	if ev.Type != db.EventNotified || dataField(t, ev, "how") != "dm" || !ev.At.Equal(e.clock.Now()) {
		t.Fatalf("delivery recorded %s %s at %v, want the notified event now", ev.Type, ev.Data, ev.At)
	}
}

func refusedFor(err error, reason db.RefusalReason) bool {
	var re *db.GateRefusedError
	return errors.As(err, &re) && re.Reason == reason
}
