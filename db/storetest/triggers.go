package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"threadflow/db"
)

func triggerTests() []test {
	return []test{
		{"ConcurrentFiresOfOneKeyMakeOneRun", testConcurrentFires},
		{"OverlapSkipQueueAllow", testFireOverlap},
		{"DeliveryPayloadAndListing", testFirePayload},
		{"FireQueuesBehindAGroupHolder", testFireQueuesBehindAHolder},
		{"FireRefusedByAGroupHolder", testFireRefusedByAHolder},
		{"ConcurrentFiresOfOneGroupOneHolder", testConcurrentFiresOneHolder},
	}
}

const trig = "nightly/schedule"

// fireOf is a fire of trig with its run in the fixture channel.
func fireOf(key string, overlap db.OverlapRule) db.Fire {
	return db.Fire{Trigger: trig, Key: key, Kind: "schedule", Overlap: overlap, Run: newRun(func(n *db.NewRun) {
		n.ID, n.Workflow, n.UserID, n.ConversationID = db.NewRunID(), "nightly", "trigger:"+trig, channelConv
	})}
}

// testConcurrentFires is every replica's scheduler firing the same scheduled second at once: one
// fire, one run; every other call finds that fire and writes nothing.
func testConcurrentFires(t *testing.T, e *env) {
	e.conversations(t)
	at := start.Add(time.Hour)
	results := make([]db.FireResult, racers)
	errs := race(func(i int) error {
		f := fireOf(db.ScheduleKey(at), db.OverlapAllow)
		f.ScheduledAt = at
		var err error
		results[i], err = e.s.FireTrigger(e.ctx, f)
		return err
	})
	created, runID := 0, ""
	for i, err := range errs {
		if err != nil {
			t.Fatalf("fire %d: %v", i, err)
		}
		if results[i].Created {
			created++
			runID = results[i].Run.ID
		}
	}
	if created != 1 || runID == "" {
		t.Fatalf("%d of %d fires created one, want exactly 1", created, racers)
	}
	for i, r := range results {
		if r.Fire.RunID != runID || r.Fire.Outcome != db.FireStarted || !r.Fire.ScheduledAt.Equal(at) {
			t.Errorf("fire %d saw %+v, want the started fire of run %s", i, r.Fire, runID)
		}
	}
	runs, err := e.s.ListRuns(e.ctx, db.RunFilter{Workflow: "nightly"})
	if err != nil || len(runs) != 1 || runs[0].UserID != "trigger:"+trig {
		t.Fatalf("runs = %v, %v; want one run by the trigger", runs, err)
	}
	states, err := e.s.TriggerStates(e.ctx)
	if err != nil || !states[trig].LastScheduled.Equal(at) || !states[trig].Since.Equal(start) {
		t.Errorf("state = %+v, %v", states[trig], err)
	}
}

// testFireOverlap: skip records a skipped fire while the previous run is active; queue records one
// waiting fire (a second is skipped) that starts once the previous run ends; allow always starts.
func testFireOverlap(t *testing.T, e *env) {
	e.conversations(t)
	fire := func(n int, o db.OverlapRule) db.FireResult {
		t.Helper()
		res, err := e.s.FireTrigger(e.ctx, fireOf(fmt.Sprintf("k%d", n), o))
		if err != nil || !res.Created {
			t.Fatalf("fire %d: %+v, %v", n, res, err)
		}
		return res
	}
	first := fire(1, db.OverlapSkip)
	if got := fire(2, db.OverlapSkip).Fire; got.Outcome != db.FireSkipped || got.Reason != db.ReasonOverlap || got.RunID != "" {
		t.Errorf("skip while active: %+v", got)
	}
	if got := fire(3, db.OverlapQueue).Fire; got.Outcome != db.FireWaiting {
		t.Errorf("queue while active: %+v", got)
	}
	if got := fire(4, db.OverlapQueue).Fire; got.Outcome != db.FireSkipped || got.Reason != db.ReasonAlreadyWaiting {
		t.Errorf("a second waiting fire: %+v", got)
	}
	if _, ok, err := e.s.StartWaitingFire(e.ctx, trig, fireOf("", "").Run); ok || err != nil {
		t.Errorf("the waiting fire started while the first run is queued: %v", err)
	}
	if got := fire(5, db.OverlapAllow).Fire; got.Outcome != db.FireStarted {
		t.Errorf("allow: %+v", got)
	}
	e.retire(t, first.Run.ID)
	fires, err := e.s.TriggerFires(e.ctx, trig, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fires {
		if f.Key == "k5" {
			e.retire(t, f.RunID)
		}
	}
	res, ok, err := e.s.StartWaitingFire(e.ctx, trig, fireOf("", "").Run)
	if err != nil || !ok || res.Fire.Key != "k3" || res.Fire.Outcome != db.FireStarted || res.Fire.RunID != res.Run.ID {
		t.Fatalf("start waiting: %+v %v %v", res, ok, err)
	}
	if _, ok, err := e.s.StartWaitingFire(e.ctx, trig, fireOf("", "").Run); ok || err != nil {
		t.Errorf("started a second time: %v", err)
	}
}

// testFirePayload: a delivery's payload is kept with its fire and read back by the run; a
// redelivery finds the first fire; an oversized payload is refused with nothing written.
func testFirePayload(t *testing.T, e *env) {
	e.conversations(t)
	f := fireOf(db.DeliveryKey("d-1"), db.OverlapAllow)
	f.Kind, f.Event, f.Payload = "github", "issues.labeled", []byte(`{"action":"labeled"}`)
	first, err := e.s.FireTrigger(e.ctx, f)
	if err != nil || !first.Created {
		t.Fatalf("fire: %+v %v", first, err)
	}
	f.Run.ID = db.NewRunID()
	again, err := e.s.FireTrigger(e.ctx, f)
	if err != nil || again.Created || again.Fire.RunID != first.Run.ID {
		t.Fatalf("redelivery: %+v %v", again, err)
	}
	payload, found, err := e.s.FirePayload(e.ctx, first.Run.ID)
	if err != nil || !found || string(payload) != `{"action":"labeled"}` {
		t.Errorf("payload = %q %v %v", payload, found, err)
	}
	if _, found, err := e.s.FirePayload(e.ctx, "nosuchrun0"); found || err != nil {
		t.Errorf("payload of another run: %v %v", found, err)
	}
	big := fireOf(db.DeliveryKey("d-2"), db.OverlapAllow)
	big.Payload = make([]byte, db.MaxPayloadBytes+1)
	if _, err := e.s.FireTrigger(e.ctx, big); err == nil {
		t.Error("an oversized payload was accepted")
	}
	fires, err := e.s.TriggerFires(e.ctx, trig, 10)
	if err != nil || len(fires) != 1 || fires[0].Event != "issues.labeled" || fires[0].RunStatus != db.StatusQueued {
		t.Errorf("fires = %+v, %v", fires, err)
	}
	if _, err := e.s.GetRun(e.ctx, big.Run.ID); !errors.Is(err, db.ErrNotFound) {
		t.Errorf("the refused fire's run: %v", err)
	}
}

// groupFire is a delivery of trigger tr whose run joins group with when_busy busy.
func groupFire(tr, key, group, busy string) db.Fire {
	return db.Fire{Trigger: tr, Key: key, Kind: "webhook", Overlap: db.OverlapAllow, Run: newRun(func(n *db.NewRun) {
		n.ID, n.Workflow, n.UserID, n.ConversationID = db.NewRunID(), "release", "trigger:"+tr, channelConv
		n.Group, n.WhenBusy = group, busy
	})}
}

// testFireQueuesBehindAHolder: a fire whose run's group a typed run holds starts its run waiting
// in line (its thread is told its place, as a typed run's is), not claimable until the holder
// completes; then the group is the fired run's and it runs.
func testFireQueuesBehindAHolder(t *testing.T, e *env) {
	e.s.SetGroupNotes(placeNotes)
	holder := e.create(t, inGroup("release-prod", db.GroupQueue))
	f := fireOf(db.ScheduleKey(start), db.OverlapSkip)
	f.Run.Group, f.Run.WhenBusy = "release-prod", db.GroupQueue
	res, err := e.s.FireTrigger(e.ctx, f)
	if err != nil || !res.Created || res.Fire.Outcome != db.FireStarted || res.Fire.RunID != f.Run.ID {
		t.Fatalf("fire: %+v, %v; want started with its run", res, err)
	}
	if p := res.Place; p.Group != "release-prod" || p.Place != 1 || p.Holder != holder.ID {
		t.Fatalf("the fired run's place %+v; want 1st in line behind %s", p, holder.ID)
	}
	if got, want := e.told(t, f.Run.ID), []string{"false/1/" + holder.ID}; !slices.Equal(got, want) {
		t.Fatalf("the fired run's thread is told %v, want %v", got, want)
	}
	e.claim(t, holder.ID)
	e.noneClaimable(t)
	// overlap: skip sees the fired run in line as its earlier run, active.
	next := fireOf(db.ScheduleKey(start.Add(time.Second)), db.OverlapSkip)
	next.Run.Group, next.Run.WhenBusy = "release-prod", db.GroupQueue
	if res, err := e.s.FireTrigger(e.ctx, next); err != nil || res.Fire.Outcome != db.FireSkipped || res.Fire.Reason != db.ReasonOverlap {
		t.Fatalf("the next fire while the first waits in line: %+v, %v; want skipped (overlap)", res.Fire, err)
	}
	r, err := e.s.GetRun(e.ctx, holder.ID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.CompleteRun(e.ctx, r.Lease(), "done"); err != nil {
		t.Fatal(err)
	}
	if p, err := e.s.GroupPlace(e.ctx, f.Run.ID); err != nil || p.Waiting() || p.Holder != f.Run.ID {
		t.Fatalf("after the holder completed the fired run stands %+v, %v; want it holding the group", p, err)
	}
	e.finish(t, f.Run.ID)
}

// testFireRefusedByAHolder: with when_busy refuse, a fire whose group is held is recorded as
// refused, naming the holder and the group, and nothing of its run is written; a redelivery finds
// that record. A fire waiting for its trigger's earlier run (overlap: queue) is refused likewise
// when its turn comes and the group is held.
func testFireRefusedByAHolder(t *testing.T, e *env) {
	e.s.SetGroupNotes(placeNotes)
	holder := e.create(t, inGroup("release-prod", db.GroupQueue))
	f := groupFire("release/deploy", db.DeliveryKey("d-1"), "release-prod", db.GroupRefuse)
	res, err := e.s.FireTrigger(e.ctx, f)
	want := db.TriggerFire{Outcome: db.FireRefused, Reason: db.ReasonGroupBusy, Holder: holder.ID, Group: "release-prod"}
	refused := func(got db.TriggerFire) bool {
		return got.Outcome == want.Outcome && got.Reason == want.Reason && got.Holder == want.Holder && got.Group == want.Group && got.RunID == ""
	}
	if err != nil || !res.Created || !refused(res.Fire) || res.Run.ID != "" {
		t.Fatalf("fire: %+v, %v; want refused, naming %s", res, err, holder.ID)
	}
	if _, err := e.s.GetRun(e.ctx, f.Run.ID); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("the refused fire's run: %v; want nothing written", err)
	}
	if got := e.told(t, f.Run.ID); len(got) != 0 {
		t.Fatalf("the refused run owes %v", got)
	}
	f.Run.ID = db.NewRunID()
	if again, err := e.s.FireTrigger(e.ctx, f); err != nil || again.Created || !refused(again.Fire) {
		t.Fatalf("redelivery: %+v, %v; want the refused fire found", again, err)
	}
	fires, err := e.s.TriggerFires(e.ctx, "release/deploy", 0)
	if err != nil || len(fires) != 1 || !refused(fires[0]) {
		t.Fatalf("listed fires %+v, %v; want the one refused fire", fires, err)
	}

	// overlap: queue, refused when its turn comes: the earlier run (no group) ends while a typed
	// run holds the group.
	first, err := e.s.FireTrigger(e.ctx, fireOf("k1", db.OverlapQueue))
	if err != nil || first.Fire.Outcome != db.FireStarted {
		t.Fatalf("first fire: %+v, %v", first, err)
	}
	waiting := fireOf("k2", db.OverlapQueue)
	if res, err := e.s.FireTrigger(e.ctx, waiting); err != nil || res.Fire.Outcome != db.FireWaiting {
		t.Fatalf("second fire: %+v, %v; want waiting", res, err)
	}
	e.retire(t, first.Run.ID)
	run := fireOf("", "").Run
	run.Group, run.WhenBusy = "release-prod", db.GroupRefuse
	res, ok, err := e.s.StartWaitingFire(e.ctx, trig, run)
	if err != nil || !ok || !res.Created || res.Fire.Key != "k2" || !refused(res.Fire) || res.Run.ID != "" {
		t.Fatalf("start waiting: %+v %v %v; want the waiting fire refused", res, ok, err)
	}
	if _, err := e.s.GetRun(e.ctx, run.ID); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("the refused waiting fire's run: %v; want nothing written", err)
	}
	if _, ok, err := e.s.StartWaitingFire(e.ctx, trig, fireOf("", "").Run); ok || err != nil {
		t.Fatalf("a refused fire waits no longer: %v %v", ok, err)
	}
}

// testConcurrentFiresOneHolder is replicas firing different triggers of one group at the same
// instant (each delivery its own fire): with refuse exactly one fire starts a run, which holds the
// group, and every other is refused naming it; with queue one holds and the others wait in line,
// one place each.
func testConcurrentFiresOneHolder(t *testing.T, e *env) {
	e.conversations(t)
	for _, busy := range []string{db.GroupRefuse, db.GroupQueue} {
		group := "release-" + busy
		results := make([]db.FireResult, racers)
		errs := race(func(i int) error {
			var err error
			results[i], err = e.s.FireTrigger(e.ctx, groupFire(fmt.Sprintf("release/hook%d", i%4), fmt.Sprintf("delivery:%s-%d", busy, i), group, busy))
			return err
		})
		var holders []string
		places := map[int]bool{}
		for i, err := range errs {
			if err != nil {
				t.Fatalf("%s: fire %d: %v", busy, i, err)
			}
			if !results[i].Created {
				t.Fatalf("%s: fire %d was not recorded by its call", busy, i)
			}
			switch f, p := results[i].Fire, results[i].Place; {
			case f.Outcome == db.FireStarted && !p.Waiting():
				holders = append(holders, f.RunID)
			case f.Outcome == db.FireStarted && busy == db.GroupQueue:
				// where it stands once every fire was recorded (its place at creation may have
				// been read before a concurrent fire committed ahead of it)
				now, err := e.s.GroupPlace(e.ctx, f.RunID)
				if err != nil || !now.Waiting() {
					t.Fatalf("queue: fire %d's run stands %+v, %v; want in line", i, now, err)
				}
				places[now.Place] = true
			case f.Outcome != db.FireRefused || busy != db.GroupRefuse:
				t.Fatalf("%s: fire %d: %+v", busy, i, f)
			}
		}
		if len(holders) != 1 {
			t.Fatalf("%s: %d fires hold the group (%v), want exactly 1", busy, len(holders), holders)
		}
		for i, r := range results {
			if f := r.Fire; f.Outcome == db.FireRefused && (f.Holder != holders[0] || f.Group != group) {
				t.Errorf("%s: fire %d refused naming %s of %q, want %s", busy, i, f.Holder, f.Group, holders[0])
			}
		}
		if busy == db.GroupQueue && (len(places) != racers-1 || !places[1] || !places[racers-1]) {
			t.Errorf("queue: places %v, want 1..%d", places, racers-1)
		}
		runs, err := e.s.ListRuns(e.ctx, db.RunFilter{Workflow: "release", Limit: 1000})
		if err != nil {
			t.Fatal(err)
		}
		want := 1
		if busy == db.GroupQueue {
			want = racers + 1
		}
		if len(runs) != want {
			t.Errorf("%s: %d release runs, want %d", busy, len(runs), want)
		}
	}
}
