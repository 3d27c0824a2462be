package db

import (
	"errors"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// The pure rules of the transition core, without a database: JudgeGate (who may answer a gate,
// how many approvals open it, what a late or stale answer gets), JudgeTimer (what a gate timer
// does when it is due) and rescue (what a rescue does with a run whose worker is gone). The
// conformance suites (storetest, drivertest) run the same rules through both engines.

var judgeNow = time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC)

// gateRun is a run paused at the approval gate "review", asked by slack:U1 an hour ago.
func gateRun(kind PauseKind, policy *GatePolicy) Run {
	p := &Pause{Kind: kind, Node: "review", Since: judgeNow.Add(-time.Hour), Gate: policy}
	return Run{ID: "r1", UserID: "slack:U1", Status: StatusPaused, Meta: Meta{Pause: p}}
}

func gateAt(run Run, after ...Event) GateState {
	return GateState{Run: run, Node: "review", AskSeq: 4, After: after}
}

func approvalEvent(by string, seq int64) Event {
	return Event{RunID: "r1", Seq: seq, Type: EventGateApproval, NodeID: "review", Data: MustJSON(GateApprovalData{By: by})}
}

func types(es []Event) []EventType {
	out := make([]EventType, len(es))
	for i, e := range es {
		out[i] = e.Type
	}
	return out
}

func TestJudgeGate(t *testing.T) {
	approve := func(by string) GateResolution {
		return GateResolution{RunID: "r1", Node: "review", Decision: DecisionApprove, By: by, Text: "ok"}
	}
	reject := GateResolution{RunID: "r1", Node: "review", Decision: DecisionReject, By: "slack:U2", Text: "no"}
	two := &GatePolicy{Required: 2}
	reply := func(seq int64, node string) *Event {
		return &Event{RunID: "r1", Seq: seq, Type: EventGateReply, NodeID: node, Data: MustJSON(GateReplyData{By: "slack:U3", Text: "ship it after lunch"})}
	}
	tests := []struct {
		name     string
		st       GateState
		g        GateResolution
		op       Op
		events   []EventType
		resolved bool
		text     string
		err      func(error) bool
	}{
		{name: "anyone approves", st: gateAt(gateRun(PauseApproval, nil)), g: approve("slack:U2"),
			op: OpApprove, events: []EventType{EventGateResolved}, resolved: true, text: "ok"},
		{name: "a rejection cancels the run", st: gateAt(gateRun(PauseApproval, nil)), g: reject,
			op: OpReject, events: []EventType{EventGateResolved, EventRunCancelled}, resolved: true, text: "no"},
		{name: "a loop gate takes an answer", st: gateAt(gateRun(PauseLoop, nil)),
			g:  GateResolution{RunID: "r1", Decision: DecisionAnswer, By: "slack:U2", Text: "more tests"},
			op: OpApprove, events: []EventType{EventGateResolved}, resolved: true, text: "more tests"},
		{name: "a gate answered already says by whom", st: gateAt(gateRun(PauseApproval, nil), Event{Type: EventGateResolved,
			Data: MustJSON(GateAnswerData{Decision: DecisionApprove, By: "slack:U9"})}), g: approve("slack:U2"),
			err: func(err error) bool { var e *GateResolvedError; return errors.As(err, &e) && e.By == "slack:U9" }},
		{name: "a run that is not paused", st: gateAt(Run{ID: "r1", Status: StatusRunning}), g: reject,
			err: func(err error) bool {
				var e *TransitionError
				return errors.As(err, &e) && e.Op == OpReject && e.Found == StatusRunning
			}},
		{name: "a recovery pause is resumed, not answered", st: gateAt(gateRun(PauseRecovery, nil)), g: approve("slack:U2"),
			err: func(err error) bool {
				var e *TransitionError
				return errors.As(err, &e) && e.Found == StatusPaused && strings.Contains(err.Error(), "resume it instead")
			}},
		{name: "an answer to another gate", st: GateState{Run: gateRun(PauseApproval, nil), Node: "deploy"}, g: approve("slack:U2"),
			err: func(err error) bool {
				return strings.Contains(err.Error(), `not waiting at gate "deploy" but at "review"`)
			}},
		{name: "someone not listed is refused, and it is recorded",
			st: gateAt(gateRun(PauseApproval, &GatePolicy{Approvers: []string{"slack:U7"}})), g: approve("slack:U2"),
			events: []EventType{EventGateRefused}, err: refusedFor(RefusedNotApprover)},
		{name: "an admin answers a gate that lets admins", st: gateAt(gateRun(PauseApproval, &GatePolicy{Admins: true})),
			g:  GateResolution{RunID: "r1", Node: "review", Decision: DecisionApprove, By: "slack:U8", Admin: true, Text: "ok"},
			op: OpApprove, events: []EventType{EventGateResolved}, resolved: true, text: "ok"},
		{name: "no self approval", st: gateAt(gateRun(PauseApproval, &GatePolicy{AllowSelfApproval: false})), g: approve("slack:U1"),
			events: []EventType{EventGateRefused}, err: refusedFor(RefusedSelfApproval)},
		{name: "the requester may still reject", st: gateAt(gateRun(PauseApproval, &GatePolicy{AllowSelfApproval: false})),
			g:  GateResolution{RunID: "r1", Node: "review", Decision: DecisionReject, By: "slack:U1", Text: "oops"},
			op: OpReject, events: []EventType{EventGateResolved, EventRunCancelled}, resolved: true, text: "oops"},
		{name: "the first of two approvals is counted", st: gateAt(gateRun(PauseApproval, two)), g: approve("slack:U2"),
			events: []EventType{EventGateApproval}, text: "ok"},
		{name: "the second distinct approval opens the gate", st: gateAt(gateRun(PauseApproval, two), approvalEvent("slack:U2", 5)),
			g: approve("slack:U3"), op: OpApprove, events: []EventType{EventGateResolved}, resolved: true, text: "ok"},
		{name: "the same person twice is refused, not recorded", st: gateAt(gateRun(PauseApproval, two), approvalEvent("slack:U2", 5)),
			g: approve("slack:U2"), err: refusedFor(RefusedAlreadyApproved)},
		{name: "an answer quoting a reply carries its text",
			st: GateState{Run: gateRun(PauseApproval, nil), Node: "review", AskSeq: 4, Reply: reply(6, "review")},
			g:  GateResolution{RunID: "r1", Node: "review", Decision: DecisionApprove, By: "slack:U2", ReplySeq: 6},
			op: OpApprove, events: []EventType{EventGateResolved}, resolved: true, text: "ship it after lunch"},
		{name: "a reply to an earlier question is stale",
			st:  GateState{Run: gateRun(PauseApproval, nil), Node: "review", AskSeq: 4, Reply: reply(3, "review")},
			g:   GateResolution{RunID: "r1", Node: "review", Decision: DecisionApprove, By: "slack:U2", ReplySeq: 3},
			err: func(err error) bool { return errors.Is(err, ErrStaleReply) }},
		{name: "a reply at another gate is stale",
			st:  GateState{Run: gateRun(PauseApproval, nil), Node: "review", AskSeq: 4, Reply: reply(6, "deploy")},
			g:   GateResolution{RunID: "r1", Node: "review", Decision: DecisionApprove, By: "slack:U2", ReplySeq: 6},
			err: func(err error) bool { return errors.Is(err, ErrStaleReply) }},
		{name: "a reply that does not exist is stale", st: gateAt(gateRun(PauseApproval, nil)),
			g:   GateResolution{RunID: "r1", Node: "review", Decision: DecisionApprove, By: "slack:U2", ReplySeq: 9},
			err: func(err error) bool { return errors.Is(err, ErrStaleReply) }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v := JudgeGate(tc.st, tc.g, judgeNow)
			if tc.err == nil && v.Err != nil || tc.err != nil && (v.Err == nil || !tc.err(v.Err)) {
				t.Fatalf("error = %v, want %s", v.Err, map[bool]string{true: "the case's error", false: "none"}[tc.err != nil])
			}
			if v.Op != tc.op || !slices.Equal(types(v.Events), tc.events) {
				t.Errorf("op %q, events %v; want %q, %v", v.Op, types(v.Events), tc.op, tc.events)
			}
			if tc.err == nil && (v.Result.Resolved != tc.resolved || v.Result.Text != tc.text) {
				t.Errorf("result resolved %v, text %q; want %v, %q", v.Result.Resolved, v.Result.Text, tc.resolved, tc.text)
			}
			for _, e := range v.Events {
				if want := map[bool]string{true: "", false: "review"}[e.Type == EventRunCancelled]; e.NodeID != want || !e.At.Equal(judgeNow) {
					t.Errorf("%s at node %q, time %v; want node %q at now", e.Type, e.NodeID, e.At, want)
				}
			}
		})
	}
}

func refusedFor(reason RefusalReason) func(error) bool {
	return func(err error) bool {
		var e *GateRefusedError
		return errors.As(err, &e) && e.Reason == reason && errors.Is(err, ErrNotPermitted)
	}
}

// Two approvals open a gate that needs two, and the resolution lists both.
func TestJudgeGateResolutionListsTheApprovals(t *testing.T) {
	st := gateAt(gateRun(PauseApproval, &GatePolicy{Required: 2}), approvalEvent("slack:U2", 5))
	v := JudgeGate(st, GateResolution{RunID: "r1", Node: "review", Decision: DecisionApprove, By: "slack:U3"}, judgeNow)
	got := Decode[GateAnswerData](v.Events[0])
	if len(got.Approvals) != 2 || got.Approvals[0].By != "slack:U2" || got.Approvals[1].By != "slack:U3" || v.Result.Required != 2 {
		t.Fatalf("gate_resolved approvals %+v, required %d; want slack:U2 then slack:U3 of 2", got.Approvals, v.Result.Required)
	}
}

// unset is a gate timer that is not set.
const unset = time.Duration(math.MinInt64)

func TestJudgeTimer(t *testing.T) {
	timed := func(kind PauseKind, due, remind time.Duration, onTimeout string) Run {
		r := gateRun(kind, nil)
		if due != unset {
			r.Meta.Pause.DueAt = judgeNow.Add(due)
		}
		if remind != unset {
			r.Meta.Pause.RemindAt = judgeNow.Add(remind)
		}
		r.Meta.Pause.OnTimeout = onTimeout
		return r
	}
	running := timed(PauseApproval, -time.Minute, unset, TimeoutReject)
	running.Status = StatusRunning
	rejected := []EventType{EventGateResolved, EventRunCancelled}
	tests := []struct {
		name   string
		run    Run
		kind   GateTimerKind // "": nothing fires
		op     Op
		events []EventType
	}{
		{"nothing is due yet", timed(PauseApproval, time.Minute, time.Second, TimeoutReject), "", "", nil},
		{"no timers", timed(PauseApproval, unset, unset, ""), "", "", nil},
		{"a timeout due now rejects the gate", timed(PauseApproval, 0, unset, TimeoutReject), TimerTimeout, OpReject, rejected},
		{"a timeout past rejects the gate", timed(PauseApproval, -time.Second, unset, TimeoutReject), TimerTimeout, OpReject, rejected},
		{"a timeout that abandons cancels the run", timed(PauseApproval, -time.Second, unset, TimeoutAbandon), TimerTimeout, OpCancel,
			[]EventType{EventRunCancelled}},
		{"a reminder due now", timed(PauseApproval, time.Hour, 0, ""), TimerReminder, "", []EventType{EventGateReminded}},
		{"a timeout wins over a reminder due with it", timed(PauseApproval, -time.Second, -time.Second, TimeoutReject), TimerTimeout,
			OpReject, rejected},
		{"a loop gate has no timers", timed(PauseLoop, -time.Second, -time.Second, TimeoutReject), "", "", nil},
		{"a recovery pause has no timers", timed(PauseRecovery, -time.Second, unset, TimeoutReject), "", "", nil},
		{"a gate answered since (the run left paused)", running, "", "", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			v, kind, ok := JudgeTimer(tc.run, 4, judgeNow)
			if ok != (tc.kind != "") || kind != tc.kind || v.Op != tc.op || !slices.Equal(types(v.Events), tc.events) {
				t.Fatalf("JudgeTimer = %q %q %v (ok %v); want %q %q %v", kind, v.Op, types(v.Events), ok, tc.kind, tc.op, tc.events)
			}
		})
	}
}

// A timeout answers as TimeoutActor and says how long nobody answered.
func TestJudgeTimerTimeoutSaysWhy(t *testing.T) {
	r := gateRun(PauseApproval, nil)
	r.Meta.Pause.DueAt, r.Meta.Pause.OnTimeout = judgeNow, TimeoutReject
	v, _, _ := JudgeTimer(r, 4, judgeNow)
	d := Decode[GateAnswerData](v.Events[0])
	if d.By != TimeoutActor || !d.TimedOut || d.Decision != DecisionReject || d.Text != "nobody answered within 1h" {
		t.Fatalf("gate_resolved of a timeout = %+v; want a timed-out rejection by %s saying 1h", d, TimeoutActor)
	}
	r.Meta.Pause.OnTimeout = TimeoutAbandon
	v, _, _ = JudgeTimer(r, 4, judgeNow)
	if c := Decode[CancelData](v.Events[0]); c.By != TimeoutActor || c.Reason != "nobody answered within 1h" || v.Result.Text != c.Reason {
		t.Fatalf("run_cancelled of an abandoning timeout = %+v (result text %q)", c, v.Result.Text)
	}
}

func TestRescue(t *testing.T) {
	tests := []struct {
		name       string
		recoveries int
		max        int
		exhausted  bool
		reason     string // in the failure, when exhausted
	}{
		{"a first rescue re-queues", 0, 3, false, ""},
		{"the last rescue the budget allows re-queues", 2, 3, false, ""},
		{"a rescue past the budget fails the run", 3, 3, true, "4 times in a row"},
		{"with no budget the first rescue fails it", 0, 0, true, "lost its worker once"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			x := Expired{RunID: "r1", Owner: "replica-a", Token: "tok", Recoveries: tc.recoveries}
			tr, exhausted := rescue(x, tc.max, judgeNow)
			u := tr.Update
			// The guard is what the run was found with: a worker that heartbeated or finished since wins.
			if u.RunID != "r1" || !reflect.DeepEqual(u.From, []Status{StatusRunning}) || !u.Leased || u.Token != "tok" ||
				!u.ExpiredBefore.Equal(judgeNow) || u.Recoveries != tc.recoveries {
				t.Errorf("guard %+v; want r1 running under tok, expired before now, at %d recoveries", u, tc.recoveries)
			}
			if !u.Set.Recovered || !u.Set.DropLease || exhausted != tc.exhausted {
				t.Errorf("set %+v, exhausted %v; want a counted recovery and the lease dropped, exhausted %v", u.Set, exhausted, tc.exhausted)
			}
			if !tc.exhausted {
				data := Decode[RunRescuedData](tr.Events[0])
				if u.Set.Status != StatusQueued || !u.Set.QueuedAt.Equal(judgeNow) || len(tr.Events) != 1 ||
					tr.Events[0].Type != EventRunRescued || data.PrevOwner != "replica-a" || data.Recoveries != tc.recoveries+1 {
					t.Errorf("re-queue %+v, events %+v; want queued at the back (now) with run_rescued", u.Set, tr.Events)
				}
				return
			}
			if u.Set.Status != StatusFailed || !u.Set.FinishedAt.Equal(judgeNow) || u.Set.Meta.LastError == nil ||
				u.Set.Meta.LastError.Class != ClassBudget || !strings.Contains(u.Set.Meta.LastError.Message, tc.reason) ||
				len(tr.Events) != 1 || tr.Events[0].Type != EventRunFailed {
				t.Errorf("failure %+v, events %v; want failed now with a budget error saying %q", u.Set, types(tr.Events), tc.reason)
			}
		})
	}
}
