package storetest

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"threadflow/db"
)

func childTests() []test {
	return []test{
		{"ChildRunsNameTheirParent", testChildRunsNameTheirParent},
		{"CancelCascadesToChildrenAtAnyDepth", testCancelCascadesToChildren},
		{"GateEndsCascadeToChildren", testGateEndsCascadeToChildren},
		{"ChildrenAreSaidInTheirParentsThread", testChildrenInParentsThread},
	}
}

// child is a NewRun modifier for a child run of parent started by its node (item -1: no fan_out).
func child(parent, node string, item int) func(*db.NewRun) {
	return func(n *db.NewRun) {
		n.ID, n.ParentRunID, n.ParentNode, n.Workflow = db.ChildRunID(parent, node, item), parent, node, "child"
	}
}

func testChildRunsNameTheirParent(t *testing.T, e *env) {
	parent, _ := e.runIn(t, fxRunning, nil)
	if parent.ParentRunID != "" || parent.ParentNode != "" {
		t.Fatalf("a run a person started has parent %q node %q, want none", parent.ParentRunID, parent.ParentNode)
	}
	c := e.create(t, child(parent.ID, "sub", -1))
	if got := e.get(t, c.ID); got.ParentRunID != parent.ID || got.ParentNode != "sub" || got.ID != db.ChildRunID(parent.ID, "sub", -1) {
		t.Fatalf("child run = id %s parent %q node %q, want %s of %s at sub", got.ID, got.ParentRunID, got.ParentNode, db.ChildRunID(parent.ID, "sub", -1), parent.ID)
	}
	// A takeover of the parent starts its node again: the derived id finds the child it started.
	if _, err := e.s.CreateRun(e.ctx, newRun(child(parent.ID, "sub", -1))); err == nil {
		t.Fatal("creating the same child twice succeeded; want the id taken")
	}
	second := e.create(t, child(parent.ID, "sub", 0))
	kids, err := e.s.ListRuns(e.ctx, db.RunFilter{ParentRunID: parent.ID})
	if err != nil || len(kids) != 2 {
		t.Fatalf("ListRuns(parent %s) = %d runs, %v; want its 2 children", parent.ID, len(kids), err)
	}
	for _, k := range kids {
		if k.ID != c.ID && k.ID != second.ID {
			t.Fatalf("ListRuns(parent) listed %s, not a child", k.ID)
		}
	}
	if none, err := e.s.ListRuns(e.ctx, db.RunFilter{ParentRunID: c.ID}); err != nil || len(none) != 0 {
		t.Fatalf("ListRuns(childless %s) = %d runs, %v; want none", c.ID, len(none), err)
	}
}

func testCancelCascadesToChildren(t *testing.T, e *env) {
	parent, _ := e.runIn(t, fxRunning, nil)
	done, _ := e.runIn(t, fxCompleted, child(parent.ID, "a", -1))
	failed, _ := e.runIn(t, fxFailed, child(parent.ID, "b", -1))
	running, l := e.runIn(t, fxRunning, child(parent.ID, "c", -1))
	grand, _ := e.runIn(t, fxQueued, child(running.ID, "inner", -1))
	other, _ := e.runIn(t, fxQueued, nil)

	got, err := e.s.CancelRun(e.ctx, parent.ID, db.Actor{ID: "slack:U9"}, "stop")
	if err != nil || got.Status != db.StatusCancelled {
		t.Fatalf("CancelRun(parent) = %s, %v", got.Status, err)
	}
	for _, c := range []struct {
		id   string
		want db.Status
	}{{failed.ID, db.StatusCancelled}, {running.ID, db.StatusCancelled}, {grand.ID, db.StatusCancelled}, {done.ID, db.StatusCompleted}, {other.ID, db.StatusQueued}} {
		r := e.get(t, c.id)
		if r.Status != c.want {
			t.Fatalf("run %s (parent %q) is %s after its parent's cancel, want %s", c.id, r.ParentRunID, r.Status, c.want)
		}
		if c.want == db.StatusCancelled && (r.LeaseOwner != "" || e.countEvents(t, c.id, db.EventRunCancelled) != 1) {
			t.Fatalf("cancelled child %s: lease owner %q, %d run_cancelled events; want no lease and one event", c.id, r.LeaseOwner, e.countEvents(t, c.id, db.EventRunCancelled))
		}
	}
	// The cancelled child's worker loses its lease: its next write is refused.
	if _, err := e.s.CompleteRun(e.ctx, l, "late"); !errors.Is(err, db.ErrLeaseLost) {
		t.Fatalf("CompleteRun by the cancelled child's worker: %v, want refused", err)
	}
}

// childNotes are ChildNotes that owe "cancelled", so a test reads what each child was told from
// its outbox.
func childNotes(child db.Run) []db.Owed {
	return []db.Owed{{Kind: "status", Key: db.OwedKey(child.ID, "nested", string(child.Status)), Target: db.TargetThread, Reply: json.RawMessage(`{}`)}}
}

// testGateEndsCascadeToChildren: every way a gate ends its run (a person's rejection, a timeout that
// rejects, a timeout that abandons) cancels the run's open children at any depth in the same
// transaction, as a cancel does: the rule is the store's, decided once. A child that completed is
// left alone; each cancelled child owes its line (ChildNotes) and records who cancelled it.
func testGateEndsCascadeToChildren(t *testing.T, e *env) {
	for _, c := range []struct {
		name string
		end  func(t *testing.T, parent db.Run)
		by   string
	}{
		{"rejected", func(t *testing.T, parent db.Run) {
			if _, err := answer(e, parent.ID, db.DecisionReject, "slack:bob", false); err != nil {
				t.Fatal(err)
			}
		}, "slack:bob"},
		{"timeout rejects", func(t *testing.T, parent db.Run) {
			e.clock.Advance(2 * time.Hour)
			if got := fire(t, e); len(got) != 1 || got[0].Kind != db.TimerTimeout {
				t.Fatalf("fired %+v, want the timeout", got)
			}
		}, db.TimeoutActor},
		{"timeout abandons", func(t *testing.T, parent db.Run) {
			e.clock.Advance(2 * time.Hour)
			if got := fire(t, e); len(got) != 1 || got[0].Kind != db.TimerTimeout {
				t.Fatalf("fired %+v, want the timeout", got)
			}
		}, db.TimeoutActor},
	} {
		t.Run(c.name, func(t *testing.T) {
			e.s.SetChildNotes(childNotes)
			onTimeout := db.TimeoutReject
			if c.name == "timeout abandons" {
				onTimeout = db.TimeoutAbandon
			}
			parent := e.pausedWith(t, timers(onTimeout))
			// A parent reaches a gate with a child that failed when the node that started it may fail
			// (continue_on_error), and with one that completed.
			done, _ := e.runIn(t, fxCompleted, child(parent.ID, "a", -1))
			failed, _ := e.runIn(t, fxFailed, child(parent.ID, "b", -1))
			grand, _ := e.runIn(t, fxRecovery, child(failed.ID, "inner", -1))
			c.end(t, parent)
			if got := e.get(t, parent.ID); got.Status != db.StatusCancelled {
				t.Fatalf("parent is %s, want cancelled", got.Status)
			}
			if got := e.get(t, done.ID); got.Status != db.StatusCompleted {
				t.Fatalf("completed child is %s after its parent ended, want completed", got.Status)
			}
			for _, id := range []string{failed.ID, grand.ID} {
				r := e.get(t, id)
				if r.Status != db.StatusCancelled || e.countEvents(t, id, db.EventRunCancelled) != 1 {
					t.Fatalf("child %s is %s with %d run_cancelled events after its parent was %s; want cancelled once", id, r.Status, e.countEvents(t, id, db.EventRunCancelled), c.name)
				}
				evs, err := e.s.Events(e.ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				if d := db.Decode[db.CancelData](evs[len(evs)-1]); d.By != c.by || !strings.Contains(d.Reason, "was cancelled") {
					t.Fatalf("child %s cancelled by %q for %q, want by %s as its parent", id, d.By, d.Reason, c.by)
				}
				u, err := e.s.Undelivered(e.ctx, id)
				if err != nil || len(u) != 1 || u[0].Key != db.OwedKey(id, "nested", "cancelled") {
					t.Fatalf("child %s owes %+v, %v; want its line showing it cancelled", id, u, err)
				}
			}
		})
	}
}

// testChildrenInParentsThread: a child created before its parent's announcement opened the parent's
// thread says nothing until it did (its messages wait, not only its run's earlier ones), and the
// delivery that opens the thread moves the parent and its children at any depth into it.
func testChildrenInParentsThread(t *testing.T, e *env) {
	parent := e.create(t, func(n *db.NewRun) {
		n.ConversationID = channelConv
		n.Owe = []db.Owed{owed("announce", "a", db.TargetOpen, ""), owed("status", "s", db.TargetLive, "status")}
	})
	kid := e.create(t, func(n *db.NewRun) {
		child(parent.ID, "sub", -1)(n)
		n.ConversationID = channelConv
		n.Owe = []db.Owed{owed("status", "line", db.TargetLive, "status")}
	})
	grand := e.create(t, func(n *db.NewRun) {
		child(kid.ID, "inner", -1)(n)
		n.ConversationID = channelConv
	})
	got := e.claimOwed(t, courier, "a") // the child's line waits for the thread its parent opens
	if next, ok, err := e.s.NextOwed(e.ctx, db.Reach{}); err != nil || !ok || next.After(start.Add(time.Minute)) {
		t.Fatalf("NextOwed = %v, %v, %v; want the announcement's claim to end", next, ok, err)
	}
	thread := db.Conversation{ID: "slack:C1:9.9", Platform: "slack", ChannelID: "C1", ThreadID: "9.9", ParentID: channelConv}
	if err := e.s.DeliveredOwed(e.ctx, db.Delivery{RunID: parent.ID, Key: got[0].Key, Version: got[0].Version, Owner: courier, Conversations: []db.Conversation{thread},
		Message: db.MessageRef{Platform: "slack", ChannelID: "C1", MessageID: "9.9"}}); err != nil {
		t.Fatalf("DeliveredOwed: %v", err)
	}
	for _, id := range []string{parent.ID, kid.ID, grand.ID} {
		if r := e.get(t, id); r.ConversationID != thread.ID {
			t.Fatalf("after the announcement run %s (parent %q) is in %s, want the parent's thread %s", id, r.ParentRunID, r.ConversationID, thread.ID)
		}
	}
	e.claimOwed(t, otherCourier, "s", "line")
}
