package storetest

import (
	"encoding/json"
	"errors"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"threadflow/db"
)

func groupTests() []test {
	return []test{
		{"ConcurrentCreatorsQueueBehindOneHolder", testGroupQueue},
		{"ConcurrentCreatorsWithRefuseOneWins", testGroupRefuse},
		{"PausedAndFailedHoldersKeepTheGroupAbandonFreesIt", testGroupKeptWhilePausedOrFailed},
		{"CancelledWaiterLeavesTheLine", testGroupCancelWaiter},
		{"RunsOfOtherGroupsDoNotWait", testGroupOthers},
	}
}

func inGroup(group, busy string) func(*db.NewRun) {
	return func(n *db.NewRun) { n.Group, n.WhenBusy = group, busy }
}

// finish claims the run and completes it.
func (e *env) finish(t *testing.T, id string) {
	t.Helper()
	r := e.claim(t, id)
	if _, err := e.s.CompleteRun(e.ctx, r.Lease(), "done"); err != nil {
		t.Fatalf("CompleteRun(%s): %v", id, err)
	}
}

// noneClaimable checks that no run can be claimed.
func (e *env) noneClaimable(t *testing.T) {
	t.Helper()
	if r, err := e.s.ClaimRun(e.ctx, worker, leaseTTL, db.Reach{}); !errors.Is(err, db.ErrNoQueuedRun) {
		t.Fatalf("ClaimRun = %s, %v; want nothing claimable while the group is held", r.ID, err)
	}
}

// testGroupQueue is 32 people starting a release of one group at the same instant: one run holds
// the group, 31 wait in line with places 1..31, none of them can be claimed, and as each holder
// completes, the group passes to the oldest waiter, until all 32 ran, one at a time.
func testGroupQueue(t *testing.T, e *env) {
	e.conversations(t)
	ids := make([]string, racers)
	errs := race(func(i int) error {
		r, err := e.s.CreateRun(e.ctx, newRun(inGroup("release-prod", db.GroupQueue)))
		ids[i] = r.ID
		return err
	})
	var holders []string
	places := map[int]bool{}
	waiting := map[string]int{}
	for i, err := range errs {
		if err != nil {
			t.Fatalf("creator %d: %v", i, err)
		}
		p, err := e.s.GroupPlace(e.ctx, ids[i])
		if err != nil {
			t.Fatalf("GroupPlace(%s): %v", ids[i], err)
		}
		if p.Group != "release-prod" {
			t.Fatalf("group %q", p.Group)
		}
		if !p.Waiting() {
			holders = append(holders, ids[i])
			continue
		}
		places[p.Place], waiting[ids[i]] = true, p.Place
	}
	if len(holders) != 1 || len(places) != racers-1 || !places[1] || !places[racers-1] {
		t.Fatalf("holders %v, places %v; want one holder and places 1..%d", holders, places, racers-1)
	}
	line, err := e.s.GroupWaiters(e.ctx, "release-prod")
	if err != nil || len(line) != racers-1 {
		t.Fatalf("GroupWaiters = %d, %v", len(line), err)
	}
	for i, id := range line {
		if waiting[id] != i+1 {
			t.Fatalf("waiter %s is %d in line but was told %d", id, i+1, waiting[id])
		}
	}
	order := append([]string{holders[0]}, line...)
	for _, id := range order {
		e.finish(t, id) // claims exactly the holder: nobody else is claimable
		if r, err := e.s.GetRun(e.ctx, id); err != nil || r.Group != "release-prod" {
			t.Fatalf("run %s keeps its group: %q, %v", id, r.Group, err)
		}
	}
	e.noneClaimable(t)
	if _, err := e.s.GroupPlace(e.ctx, order[0]); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("an ended run keeps a place: %v", err)
	}
}

// testGroupRefuse is 32 creators of a refusing group at once: one run is created, every other one
// is refused naming it, and nothing of a refused run is written.
func testGroupRefuse(t *testing.T, e *env) {
	e.conversations(t)
	ids := make([]string, racers)
	errs := race(func(i int) error {
		n := newRun(inGroup("deploy", db.GroupRefuse))
		n.ID = db.NewRunID()
		ids[i] = n.ID
		_, err := e.s.CreateRun(e.ctx, n)
		return err
	})
	var won []string
	for i, err := range errs {
		if err == nil {
			won = append(won, ids[i])
		}
	}
	if len(won) != 1 {
		t.Fatalf("%d creators won, want 1: %v", len(won), errs)
	}
	for i, err := range errs {
		if err == nil {
			continue
		}
		var busy *db.GroupBusyError
		if !errors.As(err, &busy) || busy.Holder != won[0] || busy.Group != "deploy" {
			t.Fatalf("refused creator got %v, want the group held by %s", err, won[0])
		}
		if _, err := e.s.GetRun(e.ctx, ids[i]); !errors.Is(err, db.ErrNotFound) {
			t.Fatalf("refused run %s was written: %v", ids[i], err)
		}
	}
	e.finish(t, won[0])
	if _, err := e.s.CreateRun(e.ctx, newRun(inGroup("deploy", db.GroupRefuse))); err != nil {
		t.Fatalf("the group is free once its holder completed: %v", err)
	}
}

// testGroupKeptWhilePausedOrFailed: a holder paused at a gate, or failed, keeps its group (a
// release waiting for approval still holds the line); abandoning it hands the group on.
func testGroupKeptWhilePausedOrFailed(t *testing.T, e *env) {
	for _, f := range []fixture{fxApproval, fxFailed} {
		t.Run(string(f), func(t *testing.T) {
			group := "g-" + string(f)
			holder, _ := e.runIn(t, f, inGroup(group, db.GroupQueue))
			waiter := e.create(t, inGroup(group, db.GroupQueue))
			if p, err := e.s.GroupPlace(e.ctx, waiter.ID); err != nil || p.Place != 1 || p.Holder != holder.ID {
				t.Fatalf("waiter place %+v, %v; want 1 behind %s", p, err, holder.ID)
			}
			e.noneClaimable(t)
			if _, err := e.s.CancelRun(e.ctx, holder.ID, db.Actor{ID: "slack:U9"}, "abandoned"); err != nil {
				t.Fatal(err)
			}
			if p, err := e.s.GroupPlace(e.ctx, waiter.ID); err != nil || p.Waiting() || p.Holder != waiter.ID {
				t.Fatalf("after the abandon the waiter is %+v, %v; want the holder", p, err)
			}
			e.finish(t, waiter.ID)
		})
	}
}

// placeNotes are GroupNotes that owe "<place>" (and "moved" when the line moved), so a test reads
// what each run was told from its outbox.
func placeNotes(runID string, p db.GroupPlace, moved bool) []db.Owed {
	key := db.OwedKey(runID, "group", strconv.FormatBool(moved), strconv.Itoa(p.Place), p.Holder)
	return []db.Owed{{Kind: "note", Key: key, Target: db.TargetThread, Reply: json.RawMessage(`{}`)}}
}

// told lists what a run was told about its place, as "moved/place/holder".
func (e *env) told(t *testing.T, runID string) []string {
	t.Helper()
	u, err := e.s.Undelivered(e.ctx, runID)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, o := range u {
		if _, rest, ok := strings.Cut(o.Key, ".group."); ok {
			out = append(out, strings.ReplaceAll(rest, ".", "/"))
		}
	}
	return out
}

// testGroupCancelWaiter: cancelling a queued run that waits takes it out of line; the others move
// up, and each run is told its place as the line moves (GroupNotes), in the transaction that moved it.
func testGroupCancelWaiter(t *testing.T, e *env) {
	e.s.SetGroupNotes(placeNotes)
	holder := e.create(t, inGroup("g", db.GroupQueue))
	first := e.create(t, inGroup("g", db.GroupQueue))
	second := e.create(t, inGroup("g", db.GroupQueue))
	if _, err := e.s.CancelRun(e.ctx, first.ID, db.Actor{ID: "slack:U9"}, "not needed"); err != nil {
		t.Fatal(err)
	}
	if p, err := e.s.GroupPlace(e.ctx, second.ID); err != nil || p.Place != 1 {
		t.Fatalf("second waiter %+v, %v; want first in line", p, err)
	}
	e.finish(t, holder.ID)
	want := []string{"false/2/" + holder.ID, "true/1/" + holder.ID, "true/0/" + second.ID}
	if got := e.told(t, second.ID); !slices.Equal(got, want) {
		t.Fatalf("the second waiter was told %v, want %v", got, want)
	}
	if got := e.told(t, holder.ID); len(got) != 0 {
		t.Fatalf("the holder was told %v, want nothing", got)
	}
	e.finish(t, second.ID)
}

// testGroupOthers: a group holds only its own runs.
func testGroupOthers(t *testing.T, e *env) {
	a := e.create(t, inGroup("release-prod", db.GroupQueue))
	b := e.create(t, inGroup("release-staging", db.GroupQueue))
	plain := e.create(t, nil)
	var got []string
	for range 3 {
		r, err := e.s.ClaimRun(e.ctx, worker, leaseTTL, db.Reach{})
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, r.ID)
	}
	want := []string{a.ID, b.ID, plain.ID}
	sort.Strings(got)
	sort.Strings(want)
	if len(got) != 3 || got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Fatalf("claimed %v, want %v", got, want)
	}
}
