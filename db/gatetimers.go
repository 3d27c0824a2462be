package db

import (
	"strings"
	"time"
)

// GateTimerKind says which timer of a gate fired.
type GateTimerKind string

// Gate timers.
const (
	TimerTimeout  GateTimerKind = "timeout"  // nobody answered in time: the gate was rejected or the run abandoned
	TimerReminder GateTimerKind = "reminder" // the one reminder is due
	// TimerEscalation: escalate_after came; the gate's escalate_to may answer from now on, and is told.
	TimerEscalation GateTimerKind = "escalation"
)

// GateTimer is a timer that fired, for the notice that tells the run's thread.
type GateTimer struct {
	Kind  GateTimerKind
	Run   Run   // after the timer: cancelled for a timeout, still paused for a reminder
	Pause Pause // the gate as it was asked
}

// JudgeTimer decides what is due at now for a run read in the timer's transaction: its timeout
// (which wins over the others due at the same time), its reminder, or its escalation (after a
// reminder due with it: one fires per pass, the next pass fires the other). ok is false when nothing is
// due, for example because the gate was answered since the run was selected: that is how a timer
// fires once however many replicas look.
func JudgeTimer(run Run, askSeq int64, now time.Time) (v GateVerdict, kind GateTimerKind, ok bool) {
	p := run.Meta.Pause
	if run.Status != StatusPaused || p == nil || p.Kind != PauseApproval {
		return GateVerdict{}, "", false
	}
	st := GateState{Run: run, Node: p.Node, AskSeq: askSeq}
	switch {
	case !p.DueAt.IsZero() && !now.Before(p.DueAt):
		return timeoutVerdict(st, *p, now), TimerTimeout, true
	case !p.RemindAt.IsZero() && !now.Before(p.RemindAt):
		ev := gateEvent(st, GateRemindedData{}, now)
		return GateVerdict{Events: []Event{ev}, Result: GateResult{Run: run, Node: p.Node}}, TimerReminder, true
	case !p.EscalateAt.IsZero() && !p.Escalated && p.Gate.Escalates() && !now.Before(p.EscalateAt):
		ev := gateEvent(st, GateEscalatedData{To: p.Gate.EscalateTo, Admins: p.Gate.EscalateAdmins}, now)
		return GateVerdict{Events: []Event{ev}, Result: GateResult{Run: run, Node: p.Node}}, TimerEscalation, true
	}
	return GateVerdict{}, "", false
}

// timeoutVerdict rejects the gate or abandons the run, as the gate's on_timeout says.
func timeoutVerdict(st GateState, p Pause, now time.Time) GateVerdict {
	reason := "nobody answered within " + ShortDuration(p.DueAt.Sub(p.Since))
	if p.OnTimeout == TimeoutAbandon {
		ev := NewEvent(st.Run.ID, "", 0, CancelData{By: TimeoutActor, Reason: reason}, now) // the run's, not the gate's
		return GateVerdict{Op: OpCancel, Events: []Event{ev}, Result: GateResult{Node: p.Node, Text: reason}}
	}
	g := GateResolution{RunID: st.Run.ID, Node: p.Node, Decision: DecisionReject, By: TimeoutActor, Text: reason}
	v := resolve(st, g, GateResult{Node: p.Node, Decision: DecisionReject, Resolved: true, Text: reason}, now)
	v.Events[0] = gateEvent(st, GateAnswerData{Decision: DecisionReject, By: TimeoutActor, Text: reason, TimedOut: true}, now)
	return v
}

// ShortDuration writes d without zero units: 24h, 1h30m, 45s.
func ShortDuration(d time.Duration) string {
	s := d.Round(time.Second).String()
	if strings.HasSuffix(s, "m0s") {
		s = strings.TrimSuffix(s, "0s")
	}
	if strings.HasSuffix(s, "h0m") {
		s = strings.TrimSuffix(s, "0m")
	}
	return s
}
