package storetest

import (
	"errors"
	"sync"
	"testing"
	"time"

	"threadflow/db"
)

func gatePolicyTests() []test {
	return []test{
		{"OnlyApproversAnswer", testOnlyApprovers},
		{"AdminsWhenListed", testAdminsApprove},
		{"SelfApprovalRefused", testSelfApprovalRefused},
		{"TwoApprovals", testTwoApprovals},
		{"OneRejectionRejects", testRejectionAfterApproval},
		{"ConcurrentApprovalsOpenOnce", testConcurrentApprovals},
		{"QuotedReply", testQuotedReply},
		{"StaleReplyRefused", testStaleReply},
		{"ReplyNeedsAGate", testReplyNeedsGate},
	}
}

func gateTimerTests() []test {
	return []test{
		{"TimeoutRejects", testTimeoutRejects},
		{"TimeoutAbandons", testTimeoutAbandons},
		{"ReminderOnce", testReminderOnce},
		{"AnsweredGateDoesNotTimeOut", testAnsweredNoTimeout},
		{"ConcurrentFiringOnce", testConcurrentTimers},
		{"NextTimer", testNextTimer},
		{"OtherPlatformsLeftAlone", testTimersByPlatform},
		{"EscalationAfterTheReminder", testEscalationAfterTheReminder},
		{"EscalatedToAdmins", testEscalatedAdminAnswers},
		{"DirectMessageOwedAndRecorded", testDirectOwedAndRecorded},
	}
}

// pausedWith builds a run paused at the approval gate "review" with the given policy and timers.
func (e *env) pausedWith(t *testing.T, mod func(*db.Pause)) db.Run {
	t.Helper()
	r := e.claim(t, e.create(t, nil).ID)
	p := gatePause(db.PauseApproval)
	p.Since = e.clock.Now()
	mod(&p)
	return must(t)(e.s.PauseRun(e.ctx, r.Lease(), p))
}

func policy(p db.GatePolicy) func(*db.Pause) { return func(pp *db.Pause) { pp.Gate = &p } }

func answer(e *env, id string, d db.GateDecision, by string, admin bool) (db.GateResult, error) {
	return e.s.ResolveGate(e.ctx, db.GateResolution{RunID: id, Decision: d, By: by, Name: "name of " + by, Admin: admin, Text: "note of " + by})
}

// wantRefused checks err is a refusal of reason and that the run is still paused at its gate.
func wantRefused(t *testing.T, e *env, err error, id string, reason db.RefusalReason) {
	t.Helper()
	var re *db.GateRefusedError
	if !errors.As(err, &re) || re.Reason != reason || re.RunID != id || re.Node != "review" || !errors.Is(err, db.ErrNotPermitted) {
		t.Fatalf("got %v, want a *db.GateRefusedError for %s", err, reason)
	}
	if r := e.get(t, id); r.Status != db.StatusPaused || db.AskedGate(r) != "review" {
		t.Fatalf("a refused answer changed the run: %s", r.Status)
	}
}

func testOnlyApprovers(t *testing.T, e *env) {
	r := e.pausedWith(t, policy(db.GatePolicy{Approvers: []string{"slack:alice"}, AllowSelfApproval: true}))
	_, err := answer(e, r.ID, db.DecisionApprove, "slack:mallory", false)
	wantRefused(t, e, err, r.ID, db.RefusedNotApprover)
	_, err = answer(e, r.ID, db.DecisionReject, "slack:mallory", true) // an admin, but admins are not listed
	wantRefused(t, e, err, r.ID, db.RefusedNotApprover)
	ev := e.last(t, r.ID)
	if ev.Type != db.EventGateRefused || ev.NodeID != "review" || dataField(t, ev, "by") != "slack:mallory" ||
		dataField(t, ev, "reason") != string(db.RefusedNotApprover) || dataField(t, ev, "decision") != "reject" {
		t.Fatalf("refusal recorded as %s %s", ev.Type, ev.Data)
	}
	if n := e.countEvents(t, r.ID, db.EventGateRefused); n != 2 {
		t.Fatalf("%d refusals recorded, want 2", n)
	}
	res, err := answer(e, r.ID, db.DecisionApprove, "slack:alice", false)
	if err != nil || !res.Resolved || res.Run.Status != db.StatusQueued || res.Text != "note of slack:alice" {
		t.Fatalf("approver's answer: %+v, %v", res, err)
	}
}

func testAdminsApprove(t *testing.T, e *env) {
	r := e.pausedWith(t, policy(db.GatePolicy{Approvers: []string{"slack:alice"}, Admins: true, AllowSelfApproval: true}))
	_, err := answer(e, r.ID, db.DecisionApprove, "slack:bob", false)
	wantRefused(t, e, err, r.ID, db.RefusedNotApprover)
	if res, err := answer(e, r.ID, db.DecisionApprove, "slack:bob", true); err != nil || !res.Resolved {
		t.Fatalf("admin's answer: %+v, %v", res, err)
	}
}

func testSelfApprovalRefused(t *testing.T, e *env) {
	r := e.pausedWith(t, policy(db.GatePolicy{AllowSelfApproval: false}))
	_, err := answer(e, r.ID, db.DecisionApprove, r.UserID, true) // admins are not exempt either
	wantRefused(t, e, err, r.ID, db.RefusedSelfApproval)
	res, err := answer(e, r.ID, db.DecisionReject, r.UserID, false)
	if err != nil || res.Run.Status != db.StatusCancelled {
		t.Fatalf("the requester's own rejection: %+v, %v", res, err)
	}
}

func testTwoApprovals(t *testing.T, e *env) {
	r := e.pausedWith(t, policy(db.GatePolicy{Required: 2, AllowSelfApproval: true}))
	e.clock.Advance(time.Minute)
	first, err := answer(e, r.ID, db.DecisionApprove, "slack:alice", false)
	if err != nil || first.Resolved || first.Run.Status != db.StatusPaused || len(first.Approvals) != 1 || first.Required != 2 {
		t.Fatalf("first approval: %+v, %v; want it counted, the run still paused", first, err)
	}
	_, err = answer(e, r.ID, db.DecisionApprove, "slack:alice", false)
	wantRefused(t, e, err, r.ID, db.RefusedAlreadyApproved)
	if n := e.countEvents(t, r.ID, db.EventGateRefused); n != 0 {
		t.Fatalf("a repeated approval was recorded as %d refusals", n)
	}
	e.clock.Advance(time.Minute)
	second, err := answer(e, r.ID, db.DecisionApprove, "slack:bob", false)
	if err != nil || !second.Resolved || second.Run.Status != db.StatusQueued || len(second.Approvals) != 2 {
		t.Fatalf("second approval: %+v, %v; want the gate open", second, err)
	}
	if a := second.Approvals; a[0].By != "slack:alice" || a[0].Name != "name of slack:alice" || a[0].Text != "note of slack:alice" ||
		!a[0].At.Equal(start.Add(time.Minute)) || a[1].By != "slack:bob" || a[1].Name != "name of slack:bob" {
		t.Fatalf("approvals = %+v", a)
	}
	ev := e.last(t, r.ID)
	if ev.Type != db.EventGateResolved || dataField(t, ev, "by") != "slack:bob" || len(dataField(t, ev, "approvals").([]any)) != 2 {
		t.Fatalf("resolution recorded as %s %s", ev.Type, ev.Data)
	}
	if n := e.countEvents(t, r.ID, db.EventGateApproval); n != 1 {
		t.Fatalf("%d gate_approval events, want 1 (the second approval resolves)", n)
	}
}

func testRejectionAfterApproval(t *testing.T, e *env) {
	r := e.pausedWith(t, policy(db.GatePolicy{Required: 3, AllowSelfApproval: true}))
	if _, err := answer(e, r.ID, db.DecisionApprove, "slack:alice", false); err != nil {
		t.Fatal(err)
	}
	res, err := answer(e, r.ID, db.DecisionReject, "slack:bob", false)
	if err != nil || !res.Resolved || res.Run.Status != db.StatusCancelled {
		t.Fatalf("rejection after an approval: %+v, %v", res, err)
	}
	_, err = answer(e, r.ID, db.DecisionApprove, "slack:carol", false)
	var ge *db.GateResolvedError
	if !errors.As(err, &ge) || ge.Decision != db.DecisionReject || ge.By != "slack:bob" || ge.ByName != "name of slack:bob" {
		t.Fatalf("late approval: %v, want the rejection reported", err)
	}
}

func testConcurrentApprovals(t *testing.T, e *env) {
	r := e.pausedWith(t, policy(db.GatePolicy{Required: 2, AllowSelfApproval: true}))
	const n = 8
	results := make([]db.GateResult, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			results[i], errs[i] = answer(e, r.ID, db.DecisionApprove, "slack:U"+string(rune('a'+i)), false)
		})
	}
	wg.Wait()
	counted, opened := 0, 0
	for i, err := range errs {
		switch {
		case err == nil && results[i].Resolved:
			opened++
		case err == nil:
			counted++
		case !errors.Is(err, db.ErrInvalidTransition):
			t.Fatalf("approval %d: %v", i, err)
		}
	}
	if counted != 1 || opened != 1 {
		t.Fatalf("%d approvals counted and %d opened the gate, want 1 and 1", counted, opened)
	}
	if got := e.get(t, r.ID); got.Status != db.StatusQueued || e.countEvents(t, r.ID, db.EventGateResolved) != 1 {
		t.Fatalf("run %s with %d resolutions", got.Status, e.countEvents(t, r.ID, db.EventGateResolved))
	}
}

func testQuotedReply(t *testing.T, e *env) {
	r := e.pausedWith(t, func(*db.Pause) {})
	ev, err := e.s.RecordGateReply(e.ctx, r.ID, "review", db.GateReplyData{By: "slack:bob", Text: "ship it but not on friday"})
	if err != nil || ev.Type != db.EventGateReply || ev.Seq == 0 || dataField(t, ev, "text") != "ship it but not on friday" {
		t.Fatalf("RecordGateReply = %+v, %v", ev, err)
	}
	res, err := e.s.ResolveGate(e.ctx, db.GateResolution{RunID: r.ID, Decision: db.DecisionApprove, By: "slack:alice", ReplySeq: ev.Seq})
	if err != nil || !res.Resolved || res.Text != "ship it but not on friday" {
		t.Fatalf("approve with the quoted reply: %+v, %v", res, err)
	}
	if last := e.last(t, r.ID); dataField(t, last, "text") != "ship it but not on friday" || dataField(t, last, "by") != "slack:alice" {
		t.Fatalf("resolution recorded %s", last.Data)
	}
}

func testStaleReply(t *testing.T, e *env) {
	r, _ := e.runIn(t, fxLoop, nil)
	old, err := e.s.RecordGateReply(e.ctx, r.ID, "review", db.GateReplyData{By: "slack:bob", Text: "hmm"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := resolve(e, r.ID, db.DecisionAnswer, "slack:bob"); err != nil {
		t.Fatal(err)
	}
	must(t)(e.s.PauseRun(e.ctx, e.claim(t, r.ID).Lease(), gatePause(db.PauseLoop))) // the gate asks again
	for _, seq := range []int64{old.Seq, 999} {
		_, err = e.s.ResolveGate(e.ctx, db.GateResolution{RunID: r.ID, Decision: db.DecisionApprove, By: "slack:alice", ReplySeq: seq})
		if !errors.Is(err, db.ErrStaleReply) {
			t.Fatalf("reply %d quoted at a later question: %v, want ErrStaleReply", seq, err)
		}
	}
	if got := e.get(t, r.ID); got.Status != db.StatusPaused {
		t.Fatalf("a stale quote changed the run: %s", got.Status)
	}
}

func testReplyNeedsGate(t *testing.T, e *env) {
	for _, f := range []fixture{fxRecovery, fxRunning, fxCompleted} {
		r, _ := e.runIn(t, f, nil)
		_, err := e.s.RecordGateReply(e.ctx, r.ID, "review", db.GateReplyData{By: "slack:bob", Text: "x"})
		wantTransitionError(t, err, r.ID, f.status(), false)
		e.retire(t, r.ID)
	}
}

// timers pauses a run at a gate that times out after an hour and reminds after twenty minutes.
func timers(onTimeout string) func(*db.Pause) {
	return func(p *db.Pause) {
		p.DueAt, p.RemindAt, p.OnTimeout = p.Since.Add(time.Hour), p.Since.Add(20*time.Minute), onTimeout
	}
}

func fire(t *testing.T, e *env) []db.GateTimer {
	t.Helper()
	fired, err := e.s.FireGateTimers(e.ctx, db.Reach{}, nil)
	if err != nil {
		t.Fatalf("FireGateTimers: %v", err)
	}
	return fired
}

func testTimeoutRejects(t *testing.T, e *env) {
	r := e.pausedWith(t, timers(db.TimeoutReject))
	e.clock.Advance(time.Hour - time.Second)
	if got := fire(t, e); len(got) != 1 || got[0].Kind != db.TimerReminder {
		t.Fatalf("before the timeout fired %+v, want the reminder only", got)
	}
	e.clock.Advance(time.Second)
	got := fire(t, e)
	if len(got) != 1 || got[0].Kind != db.TimerTimeout || got[0].Run.Status != db.StatusCancelled || got[0].Pause.Node != "review" {
		t.Fatalf("at the timeout fired %+v", got)
	}
	evs := e.events(t, r.ID)
	res, cancelled := evs[len(evs)-2], evs[len(evs)-1]
	if res.Type != db.EventGateResolved || dataField(t, res, "decision") != "reject" || dataField(t, res, "by") != db.TimeoutActor ||
		dataField(t, res, "timed_out") != true || dataField(t, res, "text") != "nobody answered within 1h" || cancelled.Type != db.EventRunCancelled {
		t.Fatalf("timeout recorded as %s %s, %s", res.Type, res.Data, cancelled.Type)
	}
	if again := fire(t, e); len(again) != 0 {
		t.Fatalf("the timeout fired again: %+v", again)
	}
	_, err := answer(e, r.ID, db.DecisionApprove, "slack:alice", false)
	var ge *db.GateResolvedError
	if !errors.As(err, &ge) || ge.By != db.TimeoutActor {
		t.Fatalf("approval after the timeout: %v", err)
	}
}

func testTimeoutAbandons(t *testing.T, e *env) {
	r := e.pausedWith(t, timers(db.TimeoutAbandon))
	e.clock.Advance(2 * time.Hour)
	got := fire(t, e)
	if len(got) != 1 || got[0].Kind != db.TimerTimeout || got[0].Run.Status != db.StatusCancelled {
		t.Fatalf("fired %+v, want the timeout (which wins over the reminder due too)", got)
	}
	ev := e.last(t, r.ID)
	if ev.Type != db.EventRunCancelled || dataField(t, ev, "by") != db.TimeoutActor || e.countEvents(t, r.ID, db.EventGateResolved) != 0 {
		t.Fatalf("abandon recorded as %s %s", ev.Type, ev.Data)
	}
}

func testReminderOnce(t *testing.T, e *env) {
	r := e.pausedWith(t, timers(db.TimeoutReject))
	e.clock.Advance(20 * time.Minute)
	got := fire(t, e)
	if len(got) != 1 || got[0].Kind != db.TimerReminder || got[0].Run.Status != db.StatusPaused || got[0].Run.ID != r.ID {
		t.Fatalf("fired %+v, want one reminder", got)
	}
	e.clock.Advance(time.Minute)
	if again := fire(t, e); len(again) != 0 {
		t.Fatalf("the reminder fired again: %+v", again)
	}
	if n := e.countEvents(t, r.ID, db.EventGateReminded); n != 1 {
		t.Fatalf("%d reminders recorded", n)
	}
}

func testAnsweredNoTimeout(t *testing.T, e *env) {
	r := e.pausedWith(t, timers(db.TimeoutReject))
	if _, err := answer(e, r.ID, db.DecisionApprove, "slack:alice", false); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(2 * time.Hour)
	if got := fire(t, e); len(got) != 0 {
		t.Fatalf("timers of an answered gate fired: %+v", got)
	}
	// The next gate of the run has its own timers, or none.
	must(t)(e.s.PauseRun(e.ctx, e.claim(t, r.ID).Lease(), gatePause(db.PauseApproval)))
	e.clock.Advance(2 * time.Hour)
	if got := fire(t, e); len(got) != 0 {
		t.Fatalf("a gate without timers fired %+v", got)
	}
}

func testConcurrentTimers(t *testing.T, e *env) {
	r := e.pausedWith(t, timers(db.TimeoutReject))
	e.clock.Advance(2 * time.Hour)
	var mu sync.Mutex
	var all []db.GateTimer
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() {
			got, err := e.s.FireGateTimers(e.ctx, db.Reach{}, nil)
			if err != nil {
				t.Errorf("FireGateTimers: %v", err)
			}
			mu.Lock()
			all = append(all, got...)
			mu.Unlock()
		})
	}
	wg.Wait()
	if len(all) != 1 || e.countEvents(t, r.ID, db.EventGateResolved) != 1 {
		t.Fatalf("six concurrent passes fired %d timers and %d resolutions, want 1 and 1", len(all), e.countEvents(t, r.ID, db.EventGateResolved))
	}
}

func testNextTimer(t *testing.T, e *env) {
	if _, ok, err := e.s.NextGateTimer(e.ctx, db.Reach{}); err != nil || ok {
		t.Fatalf("NextGateTimer with no gates = %v, %v", ok, err)
	}
	r := e.pausedWith(t, timers(db.TimeoutReject))
	next, ok, err := e.s.NextGateTimer(e.ctx, db.Reach{})
	if err != nil || !ok || !next.Equal(r.Meta.Pause.RemindAt) {
		t.Fatalf("NextGateTimer = %v %v %v, want the reminder at %v", next, ok, err, r.Meta.Pause.RemindAt)
	}
	e.clock.Advance(20 * time.Minute)
	fire(t, e)
	if next, _, err = e.s.NextGateTimer(e.ctx, db.Reach{}); err != nil || !next.Equal(r.Meta.Pause.DueAt) {
		t.Fatalf("after the reminder NextGateTimer = %v, %v, want the timeout at %v", next, err, r.Meta.Pause.DueAt)
	}
}

func testTimersByPlatform(t *testing.T, e *env) {
	r := e.pausedWith(t, timers(db.TimeoutReject)) // a slack run
	e.clock.Advance(2 * time.Hour)
	if _, ok, err := e.s.NextGateTimer(e.ctx, db.Reach{Platforms: []string{"discord"}}); err != nil || ok {
		t.Fatalf("NextGateTimer for discord reports the timer of a slack run (or fails: %v)", err)
	}
	if got, err := e.s.FireGateTimers(e.ctx, db.Reach{Platforms: []string{"discord", "console"}}, nil); err != nil || len(got) != 0 {
		t.Fatalf("FireGateTimers for discord fired %+v, %v", got, err)
	}
	if got, err := e.s.FireGateTimers(e.ctx, db.Reach{Platforms: []string{"discord", "slack"}}, nil); err != nil || len(got) != 1 || got[0].Run.ID != r.ID {
		t.Fatalf("FireGateTimers for slack fired %+v, %v", got, err)
	}
}
