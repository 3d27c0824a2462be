package storetest

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"threadflow/db"
)

func outboxTests() []test {
	return []test{
		{"CreationOwesAnnouncementThenStatus", testCreationOwes},
		{"TransitionOwesWithItsTransactionOnly", testTransitionOwes},
		{"GateAnswersAndTimersOwe", testGateOwes},
		{"ClaimsAreExclusiveAndExpire", testOwedClaims},
		{"RetryBackoffAndFailure", testOwedRetry},
		{"ReplaceLatestWins", testOwedReplace},
		{"ReplaceMovesAfterTheOthers", testOwedReplaceMoves},
		{"ClaimsRunsInReachOnly", testOwedReach},
		{"RefusesWhatCannotBeDelivered", testOwedInvalid},
	}
}

const courier, otherCourier = "courier-1", "courier-2"

// owed is an owed message of kind with a reply naming text.
func owed(kind, key string, target db.OwedTarget, ref string) db.Owed {
	return db.Owed{Kind: kind, Key: key, Target: target, Ref: ref, Reply: json.RawMessage(fmt.Sprintf(`{"Text":[{"S":%q}]}`, kind))}
}

// claimOwed claims and checks which keys came, in order.
func (e *env) claimOwed(t *testing.T, owner string, want ...string) []db.OutboxEntry {
	t.Helper()
	got, err := e.s.ClaimOwed(e.ctx, owner, time.Minute, db.Reach{}, 10)
	if err != nil {
		t.Fatalf("ClaimOwed(%s): %v", owner, err)
	}
	var keys []string
	for _, g := range got {
		keys = append(keys, g.Key)
	}
	if fmt.Sprint(keys) != fmt.Sprint(want) {
		t.Fatalf("ClaimOwed(%s) claimed %v, want %v", owner, keys, want)
	}
	return got
}

func (e *env) delivered(t *testing.T, x db.OutboxEntry, owner, messageID string) {
	t.Helper()
	d := db.Delivery{RunID: x.RunID, Key: x.Key, Version: x.Version, Owner: owner,
		Message: db.MessageRef{Platform: "slack", ChannelID: "C1", ThreadID: "T1", MessageID: messageID}}
	if err := e.s.DeliveredOwed(e.ctx, d); err != nil {
		t.Fatalf("DeliveredOwed(%s): %v", x.Key, err)
	}
}

func (e *env) undelivered(t *testing.T, runID string) []db.OutboxEntry {
	t.Helper()
	u, err := e.s.Undelivered(e.ctx, runID)
	if err != nil {
		t.Fatalf("Undelivered: %v", err)
	}
	return u
}

// testCreationOwes: a run created with its announcement and status message owes them in order; the
// announcement's delivery makes its thread the run's conversation, and the status message is
// recorded as the run's message so later edits find it.
func testCreationOwes(t *testing.T, e *env) {
	r := e.create(t, func(n *db.NewRun) {
		n.ConversationID = channelConv
		n.Owe = []db.Owed{owed("announce", "a", db.TargetOpen, ""), owed("status", "s", db.TargetLive, "status")}
	})
	got := e.claimOwed(t, courier, "a") // the status waits for the thread
	if a := got[0]; a.RunID != r.ID || a.Target != db.TargetOpen || a.Attempts != 1 || a.InDoubt() || a.State != db.OutboxOwed ||
		!a.CreatedAt.Equal(start) || string(a.Reply) == "" {
		t.Fatalf("claimed announcement = %+v", a)
	}
	e.claimOwed(t, otherCourier) // nothing: the announcement is claimed, the status is behind it
	thread := db.Conversation{ID: "slack:C1:9.9", Platform: "slack", ChannelID: "C1", ThreadID: "9.9", ParentID: channelConv}
	if err := e.s.DeliveredOwed(e.ctx, db.Delivery{RunID: r.ID, Key: got[0].Key, Version: got[0].Version, Owner: courier, Conversations: []db.Conversation{thread},
		Message: db.MessageRef{Platform: "slack", ChannelID: "C1", MessageID: "9.9"}}); err != nil {
		t.Fatalf("DeliveredOwed: %v", err)
	}
	if run := e.get(t, r.ID); run.ConversationID != thread.ID {
		t.Fatalf("after the announcement the run is in %s, want its thread %s", run.ConversationID, thread.ID)
	}
	st := e.claimOwed(t, otherCourier, "s")
	e.delivered(t, st[0], otherCourier, "10.1")
	refs, err := e.s.MessageRefs(e.ctx, r.ID)
	if err != nil || len(refs) != 1 || refs[0].Kind != "status" || refs[0].MessageID != "10.1" {
		t.Fatalf("MessageRefs = %+v, %v; want the status message", refs, err)
	}
	if u := e.undelivered(t, r.ID); len(u) != 0 {
		t.Fatalf("Undelivered after both were sent = %+v", u)
	}
	if err := e.s.DeliveredOwed(e.ctx, db.Delivery{RunID: r.ID, Key: st[0].Key, Version: st[0].Version, Owner: otherCourier}); !errors.Is(err, db.ErrOwedGone) {
		t.Fatalf("second DeliveredOwed: %v, want ErrOwedGone", err)
	}
}

// testTransitionOwes: a transition's owed message is recorded with it, once; one refused records
// nothing, and a replay of a committed write records nothing again.
func testTransitionOwes(t *testing.T, e *env) {
	r, l := e.runIn(t, fxRunning, nil)
	done := owed("completed", "done", db.TargetThread, "")
	var seen db.Run
	if _, err := e.s.CompleteRun(e.ctx, l, "out", func(r db.Run) []db.Owed { seen = r; return []db.Owed{done} }); err != nil {
		t.Fatalf("CompleteRun: %v", err)
	}
	if seen.ID != r.ID || seen.Status != db.StatusCompleted || seen.Meta.Output != "out" {
		t.Fatalf("the owed messages were rendered from %+v; want the run as completed", seen)
	}
	if _, err := e.s.CompleteRun(e.ctx, l, "out", db.Owe(done)); err != nil {
		t.Fatalf("replayed CompleteRun: %v", err)
	}
	if _, err := e.s.CancelRun(e.ctx, r.ID, db.Actor{ID: "slack:U1"}, "late", db.Owe(owed("cancelled", "cancel", db.TargetThread, ""))); err == nil {
		t.Fatal("CancelRun of a completed run succeeded")
	}
	if u := e.undelivered(t, r.ID); len(u) != 1 || u[0].Key != "done" || u[0].Kind != "completed" {
		t.Fatalf("Undelivered = %+v; want the final message once, no cancel notice", u)
	}
	p, pl := e.runIn(t, fxRunning, nil)
	if _, err := e.s.PauseRun(e.ctx, pl, gatePause(db.PauseApproval), db.Owe(owed("gate", "ask", db.TargetThread, "gate"))); err != nil {
		t.Fatalf("PauseRun: %v", err)
	}
	e.claimOwed(t, courier, "done", "ask")
	if _, err := e.s.FailRun(e.ctx, pl, db.RunError{Message: "x"}, db.Owe(owed("failed", "fail", db.TargetThread, ""))); err == nil {
		t.Fatal("FailRun of a paused run succeeded")
	}
	if u := e.undelivered(t, p.ID); len(u) != 1 {
		t.Fatalf("Undelivered = %+v; the refused failure owes nothing", u)
	}
}

// testGateOwes: an answer owes what Owe says of its result, in its transaction; a refused answer owes
// nothing. A reminder owes its note with the timer.
func testGateOwes(t *testing.T, e *env) {
	r, _ := e.runIn(t, fxApproval, nil)
	asked := func(res db.GateResult) []db.Owed {
		return []db.Owed{owed("resolved", "resolved-"+string(res.Decision), db.TargetEdit, "gate")}
	}
	if _, err := e.s.ResolveGate(e.ctx, db.GateResolution{RunID: r.ID, Decision: db.DecisionReject, By: "slack:U1", Owe: asked}); err != nil {
		t.Fatalf("ResolveGate: %v", err)
	}
	if _, err := e.s.ResolveGate(e.ctx, db.GateResolution{RunID: r.ID, Decision: db.DecisionApprove, By: "slack:U1", Owe: asked}); err == nil {
		t.Fatal("second answer accepted")
	}
	if u := e.undelivered(t, r.ID); len(u) != 1 || u[0].Key != "resolved-reject" {
		t.Fatalf("Undelivered = %+v; want the rejection's message only", u)
	}

	g, gl := e.runIn(t, fxRunning, nil)
	p := gatePause(db.PauseApproval)
	p.RemindAt = start.Add(time.Minute)
	if _, err := e.s.PauseRun(e.ctx, gl, p); err != nil {
		t.Fatalf("PauseRun: %v", err)
	}
	e.clock.Advance(2 * time.Minute)
	fired, err := e.s.FireGateTimers(e.ctx, db.Reach{}, func(tm db.GateTimer) []db.Owed {
		return []db.Owed{owed(string(tm.Kind), "timer-"+tm.Run.ID, db.TargetThread, "")}
	})
	if err != nil || len(fired) != 1 || fired[0].Kind != db.TimerReminder {
		t.Fatalf("FireGateTimers = %+v, %v", fired, err)
	}
	if u := e.undelivered(t, g.ID); len(u) != 1 || u[0].Key != "timer-"+g.ID || u[0].Kind != string(db.TimerReminder) {
		t.Fatalf("Undelivered = %+v; want the reminder", u)
	}
}

// testOwedClaims: a claimed message is no one else's until its claim expires; claimed again, it is
// in doubt (its first courier may have posted it).
func testOwedClaims(t *testing.T, e *env) {
	r := e.create(t, func(n *db.NewRun) { n.Owe = []db.Owed{owed("note", "n1", db.TargetThread, "")} })
	e.claimOwed(t, courier, "n1")
	e.claimOwed(t, otherCourier)
	next, ok, err := e.s.NextOwed(e.ctx, db.Reach{})
	if err != nil || !ok || !next.Equal(start.Add(time.Minute)) {
		t.Fatalf("NextOwed = %v, %v, %v; want the claim's end", next, ok, err)
	}
	e.clock.Advance(time.Minute + time.Second)
	again := e.claimOwed(t, otherCourier, "n1")
	if again[0].Attempts != 2 || !again[0].InDoubt() {
		t.Fatalf("reclaimed = %+v; want attempt 2, in doubt", again[0])
	}
	if err := e.s.DeliveredOwed(e.ctx, db.Delivery{RunID: r.ID, Key: again[0].Key, Version: again[0].Version, Owner: courier}); !errors.Is(err, db.ErrOwedGone) {
		t.Fatalf("DeliveredOwed by the expired claim: %v, want ErrOwedGone", err)
	}
	e.delivered(t, again[0], otherCourier, "m1")
	if _, ok, err := e.s.NextOwed(e.ctx, db.Reach{}); err != nil || ok {
		t.Fatalf("NextOwed with nothing owed = %v, %v", ok, err)
	}
}

// testOwedRetry: a retry is due again when it says; a message given up on is failed with its error
// and no longer holds back the run's later messages.
func testOwedRetry(t *testing.T, e *env) {
	r := e.create(t, func(n *db.NewRun) {
		n.Owe = []db.Owed{owed("gate", "q", db.TargetThread, "gate"), owed("note", "n", db.TargetThread, "")}
	})
	x := e.claimOwed(t, courier, "q")[0]
	at := start.Add(5 * time.Second)
	if err := e.s.RetryOwed(e.ctx, db.Retry{RunID: r.ID, Key: x.Key, Version: x.Version, Owner: courier, Error: "rate limited", At: at}); err != nil {
		t.Fatalf("RetryOwed: %v", err)
	}
	e.claimOwed(t, courier) // not due, and the note waits behind it
	if next, ok, err := e.s.NextOwed(e.ctx, db.Reach{}); err != nil || !ok || !next.Equal(at) {
		t.Fatalf("NextOwed = %v, %v, %v; want %v", next, ok, err, at)
	}
	e.clock.Advance(5 * time.Second)
	x = e.claimOwed(t, courier, "q")[0]
	if x.LastError != "rate limited" || x.Attempts != 2 {
		t.Fatalf("retried entry = %+v", x)
	}
	if err := e.s.RetryOwed(e.ctx, db.Retry{RunID: r.ID, Key: x.Key, Version: x.Version, Owner: courier, Error: "channel_not_found", Fail: true}); err != nil {
		t.Fatalf("RetryOwed(fail): %v", err)
	}
	e.claimOwed(t, courier, "n")
	u := e.undelivered(t, r.ID)
	if len(u) != 2 || u[0].Key != "q" || u[0].State != db.OutboxFailed || u[0].LastError != "channel_not_found" || u[1].State != db.OutboxOwed {
		t.Fatalf("Undelivered = %+v; want the failed question and the owed note", u)
	}
}

// testOwedReplace: the latest content of a replaced message wins, also over a delivery of an older
// version in flight, and a delivered one is owed again with new content.
func testOwedReplace(t *testing.T, e *env) {
	r := e.create(t, nil)
	status := func(text string) db.Owed {
		o := owed("status", "status", db.TargetLive, "status")
		o.Reply, o.Replace = json.RawMessage(`{"Text":[{"S":"`+text+`"}]}`), true
		return o
	}
	if err := e.s.Owe(e.ctx, r.ID, status("queued")); err != nil {
		t.Fatalf("Owe: %v", err)
	}
	x := e.claimOwed(t, courier, "status")[0]
	if err := e.s.Owe(e.ctx, r.ID, status("running")); err != nil {
		t.Fatalf("Owe(replace): %v", err)
	}
	e.delivered(t, x, courier, "s1") // posted the old content: recorded, still owed
	if refs, err := e.s.MessageRefs(e.ctx, r.ID); err != nil || len(refs) != 1 || refs[0].MessageID != "s1" {
		t.Fatalf("MessageRefs = %+v, %v; want the posted status recorded", refs, err)
	}
	y := e.claimOwed(t, courier, "status")[0]
	if string(y.Reply) == string(x.Reply) || y.Version != x.Version+1 || !y.InDoubt() {
		t.Fatalf("replaced entry = %+v; want the running content, next version", y)
	}
	e.delivered(t, y, courier, "s1")
	if err := e.s.Owe(e.ctx, r.ID, status("completed")); err != nil {
		t.Fatalf("Owe after sent: %v", err)
	}
	z := e.claimOwed(t, courier, "status")[0]
	if z.Attempts != 1 {
		t.Fatalf("owed again after being sent = %+v; want a first attempt", z)
	}
	if u := e.undelivered(t, r.ID); len(u) != 1 {
		t.Fatalf("Undelivered = %+v; want one status row", u)
	}
}

// testOwedReach: a courier claims only what it can deliver.
func testOwedReach(t *testing.T, e *env) {
	e.create(t, func(n *db.NewRun) { n.Owe = []db.Owed{owed("note", "n", db.TargetThread, "")} })
	got, err := e.s.ClaimOwed(e.ctx, courier, time.Minute, db.Reach{Platforms: []string{"discord"}}, 10)
	if err != nil || len(got) != 0 {
		t.Fatalf("ClaimOwed out of reach = %+v, %v", got, err)
	}
	if _, ok, err := e.s.NextOwed(e.ctx, db.Reach{Platforms: []string{"discord"}}); err != nil || ok {
		t.Fatalf("NextOwed out of reach = %v, %v", ok, err)
	}
	got, err = e.s.ClaimOwed(e.ctx, courier, time.Minute, db.Reach{Platforms: []string{"slack"}}, 10)
	if err != nil || len(got) != 1 {
		t.Fatalf("ClaimOwed in reach = %+v, %v", got, err)
	}
}

// testOwedInvalid: what could never be delivered is refused with the transition that owes it.
func testOwedInvalid(t *testing.T, e *env) {
	r, l := e.runIn(t, fxRunning, nil)
	bad := []db.Owed{
		{Kind: "note", Target: db.TargetThread, Reply: json.RawMessage(`{}`)},
		{Kind: "note", Key: "k", Target: db.TargetThread, Reply: json.RawMessage(`{`)},
		{Kind: "status", Key: "k", Target: db.TargetLive, Reply: json.RawMessage(`{}`)},
		{Kind: "note", Key: "k", Target: "nowhere", Reply: json.RawMessage(`{}`)},
	}
	for _, b := range bad {
		if _, err := e.s.CompleteRun(e.ctx, l, "", db.Owe(b)); err == nil {
			t.Fatalf("CompleteRun owing %+v succeeded", b)
		}
		if err := e.s.Owe(e.ctx, r.ID, b); err == nil {
			t.Fatalf("Owe(%+v) succeeded", b)
		}
	}
	if got := e.get(t, r.ID); got.Status != db.StatusRunning {
		t.Fatalf("run is %s after refused completions", got.Status)
	}
}

// testOwedReplaceMoves: a replaced message goes out after what was owed before its new content, so
// a run's thread shows things in the order they happened (a status edited to cancelled after the
// notice of why).
func testOwedReplaceMoves(t *testing.T, e *env) {
	status := func(text string) db.Owed {
		o := owed("status", "status", db.TargetLive, "status")
		o.Reply, o.Replace = json.RawMessage(`{"Text":[{"S":"`+text+`"}]}`), true
		return o
	}
	r := e.create(t, func(n *db.NewRun) { n.Owe = []db.Owed{status("queued"), owed("gate", "q", db.TargetThread, "gate")} })
	if err := e.s.Owe(e.ctx, r.ID, owed("resolved", "why", db.TargetThread, ""), status("cancelled")); err != nil {
		t.Fatalf("Owe: %v", err)
	}
	for _, want := range []string{"q", "why", "status"} {
		x := e.claimOwed(t, courier, want)[0]
		e.delivered(t, x, courier, "m-"+want)
	}
	if err := e.s.Owe(e.ctx, r.ID, status("cancelled")); err != nil {
		t.Fatalf("Owe(same content): %v", err)
	}
	if u := e.undelivered(t, r.ID); len(u) != 0 {
		t.Fatalf("the same content owed again = %+v; want nothing to deliver", u)
	}
}
