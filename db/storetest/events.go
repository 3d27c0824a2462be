package storetest

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"threadflow/db"
)

func eventTests() []test {
	return []test{
		{"ReadBackInOrder", testEventsInOrder},
		{"IdempotentNodeCompleted", testIdempotentReplay},
		{"IdempotentPerAttempt", testIdempotentPerAttempt},
		{"NonIdempotentAppends", testNonIdempotentAppends},
		{"InvalidJSONRejected", testInvalidJSON},
		{"RecordEventsAsOneByOne", testRecordEventsAsOneByOne},
		{"RecordEventsReplayInside", testRecordEventsReplayInside},
		{"RecordEventsLostLease", testRecordEventsLostLease},
	}
}

// RecordEvents appends in order with consecutive seqs, as RecordEvent would one after the other,
// and node_completed in a batch resets the rescue counter as it does alone.
func testRecordEventsAsOneByOne(t *testing.T, e *env) {
	r, l := e.runIn(t, fxRunning, nil)
	batch := []db.Event{
		{Type: db.EventNodeCompleted, NodeID: "plan", Attempt: 1, Data: json.RawMessage(`{"output":"ok"}`)},
		{Type: db.EventNodeStarted, NodeID: "code", Attempt: 1},
		{Type: db.EventNodeStarted, NodeID: "test", Attempt: 1},
	}
	got, errs := e.s.RecordEvents(e.ctx, l, batch)
	for i := range batch {
		if errs[i] != nil || got[i].Seq != int64(i+3) || got[i].Type != batch[i].Type || got[i].RunID != r.ID {
			t.Fatalf("event %d: %+v, %v; want %s at seq %d", i, got[i], errs[i], batch[i].Type, i+3)
		}
	}
	if evs := e.events(t, r.ID); len(evs) != 5 || evs[2].NodeID != "plan" || evs[3].NodeID != "code" || evs[4].NodeID != "test" {
		t.Fatalf("events %v; want run_created, run_claimed, then the batch in order", types(evs))
	}
}

// A batch holding a copy of a recorded lifecycle event replays it (the stored event, no new row)
// and appends the rest; a copy with other data is a conflict for that event only.
func testRecordEventsReplayInside(t *testing.T, e *env) {
	r, l := e.runIn(t, fxRunning, nil)
	done := db.Event{Type: db.EventNodeCompleted, NodeID: "plan", Attempt: 1, Data: json.RawMessage(`{"output":"ok"}`)}
	stored, err := e.s.RecordEvent(e.ctx, l, done)
	if err != nil {
		t.Fatal(err)
	}
	other := done
	other.Data = json.RawMessage(`{"output":"different"}`)
	got, errs := e.s.RecordEvents(e.ctx, l, []db.Event{done, {Type: db.EventNodeStarted, NodeID: "code", Attempt: 1}, other})
	if errs[0] != nil || got[0].Seq != stored.Seq {
		t.Errorf("replayed copy: %+v, %v; want the stored event at seq %d", got[0], errs[0], stored.Seq)
	}
	if errs[1] != nil || got[1].Seq != stored.Seq+1 {
		t.Errorf("new event: %+v, %v; want seq %d", got[1], errs[1], stored.Seq+1)
	}
	if !errors.Is(errs[2], db.ErrConflict) {
		t.Errorf("copy with other data: %v; want ErrConflict", errs[2])
	}
	if n := len(e.events(t, r.ID)); n != 4 {
		t.Errorf("%d events; want run_created, run_claimed, plan's node_completed and code's node_started", n)
	}
}

// A batch under a lease that is no longer held appends nothing, and every event says so.
func testRecordEventsLostLease(t *testing.T, e *env) {
	r, l := e.runIn(t, fxRunning, nil)
	stale := l
	stale.Token = "not-the-lease"
	_, errs := e.s.RecordEvents(e.ctx, stale, []db.Event{
		{Type: db.EventNodeStarted, NodeID: "plan", Attempt: 1},
		{Type: db.EventNodeStarted, NodeID: "code", Attempt: 1},
	})
	for i, err := range errs {
		if !errors.Is(err, db.ErrLeaseLost) {
			t.Errorf("event %d: %v; want ErrLeaseLost", i, err)
		}
	}
	if n := len(e.events(t, r.ID)); n != 2 {
		t.Errorf("%d events; want only run_created and run_claimed", n)
	}
}

func testEventsInOrder(t *testing.T, e *env) {
	r, l := e.runIn(t, fxRunning, nil)
	written := []db.Event{
		{Type: db.EventNodeStarted, NodeID: "plan", Attempt: 1},
		{Type: db.EventNodeCompleted, NodeID: "plan", Attempt: 1, Data: json.RawMessage(`{"output":"ok"}`)},
		{Type: db.EventSessionReset, NodeID: "code", Data: json.RawMessage(`{"reason":"stale"}`)},
		{Type: db.EventLoopIteration, NodeID: "code", Attempt: 2, Data: json.RawMessage(`{"iteration":2}`)},
	}
	for i, w := range written {
		e.clock.Advance(time.Second)
		got, err := e.s.RecordEvent(e.ctx, l, w)
		if err != nil {
			t.Fatalf("RecordEvent %s: %v", w.Type, err)
		}
		if got.Seq != int64(i+3) || !got.At.Equal(e.clock.Now()) || got.RunID != r.ID {
			t.Fatalf("RecordEvent %s returned seq %d at %v run %s, want seq %d at %v", w.Type, got.Seq, got.At, got.RunID, i+3, e.clock.Now())
		}
	}
	evs := e.events(t, r.ID)
	want := append([]db.EventType{db.EventRunCreated, db.EventRunClaimed}, types(written)...)
	if len(evs) != len(want) {
		t.Fatalf("events %v, want %v", types(evs), want)
	}
	for i, ev := range evs[2:] {
		w := written[i]
		data := w.Data
		if data == nil {
			data = json.RawMessage(`{}`)
		}
		if ev.Type != w.Type || ev.NodeID != w.NodeID || ev.Attempt != w.Attempt || !equalJSON(ev.Data, data) {
			t.Fatalf("event %d read back as %s/%s/%d %s, want %s/%s/%d %s", ev.Seq, ev.Type, ev.NodeID, ev.Attempt, ev.Data, w.Type, w.NodeID, w.Attempt, data)
		}
	}
	if ev := evs[0]; dataField(t, ev, "workflow") != "build" || dataField(t, ev, "user") != "slack:U1" {
		t.Fatalf("run_created data %s, want workflow and user", ev.Data)
	}
}

// testIdempotentReplay is the crash-recovery case: a worker that restarts replays node_completed.
func testIdempotentReplay(t *testing.T, e *env) {
	r, l := e.runIn(t, fxRunning, nil)
	done := db.Event{Type: db.EventNodeCompleted, NodeID: "build", Attempt: 1, Data: json.RawMessage(`{"output":"ok","files":[1,2]}`)}
	first, err := e.s.RecordEvent(e.ctx, l, done)
	if err != nil {
		t.Fatalf("RecordEvent: %v", err)
	}
	e.clock.Advance(time.Second)
	same := done
	same.Data = json.RawMessage("{ \"files\": [1, 2],\n \"output\": \"ok\" }")
	again, err := e.s.RecordEvent(e.ctx, l, same)
	if err != nil {
		t.Fatalf("replay with the same data (reformatted): %v, want nil", err)
	}
	if again.Seq != first.Seq || !again.At.Equal(first.At) {
		t.Fatalf("replay returned seq %d at %v, want the stored event seq %d at %v", again.Seq, again.At, first.Seq, first.At)
	}
	differ := done
	differ.Data = json.RawMessage(`{"output":"other","files":[1,2]}`)
	_, err = e.s.RecordEvent(e.ctx, l, differ)
	if !errors.Is(err, db.ErrConflict) {
		t.Fatalf("replay with different data: %v, want ErrConflict", err)
	}
	if errors.Is(err, db.ErrLeaseLost) {
		t.Fatalf("a conflict must not look like a lost lease: %v", err)
	}
	if n := e.countEvents(t, r.ID, db.EventNodeCompleted); n != 1 {
		t.Fatalf("%d node_completed rows, want 1", n)
	}
	if _, err := e.s.RecordEvent(e.ctx, l, db.Event{Type: db.EventNodeStarted, NodeID: "next"}); err != nil {
		t.Fatalf("after a conflict the lease must still work: %v", err)
	}
}

func testIdempotentPerAttempt(t *testing.T, e *env) {
	r, l := e.runIn(t, fxRunning, nil)
	for _, ev := range []db.Event{
		{Type: db.EventNodeStarted, NodeID: "test", Attempt: 1},
		{Type: db.EventNodeStarted, NodeID: "test", Attempt: 1},
		{Type: db.EventNodeFailed, NodeID: "test", Attempt: 1, Data: json.RawMessage(`{"error":"exit 1"}`)},
		{Type: db.EventNodeStarted, NodeID: "test", Attempt: 2},
		{Type: db.EventNodeStarted, NodeID: "lint", Attempt: 1},
		{Type: db.EventNodeSkipped, NodeID: "deploy"},
		{Type: db.EventNodeSkipped, NodeID: "deploy"},
	} {
		if _, err := e.s.RecordEvent(e.ctx, l, ev); err != nil {
			t.Fatalf("RecordEvent %s %s#%d: %v", ev.Type, ev.NodeID, ev.Attempt, err)
		}
	}
	if n := e.countEvents(t, r.ID, db.EventNodeStarted); n != 3 {
		t.Fatalf("%d node_started rows, want 3 (test#1, test#2, lint#1)", n)
	}
	if n := e.countEvents(t, r.ID, db.EventNodeSkipped); n != 1 {
		t.Fatalf("%d node_skipped rows, want 1", n)
	}
}

func testNonIdempotentAppends(t *testing.T, e *env) {
	r, l := e.runIn(t, fxRunning, nil)
	for range 2 {
		if _, err := e.s.RecordEvent(e.ctx, l, db.Event{Type: db.EventSessionReset, NodeID: "code"}); err != nil {
			t.Fatalf("RecordEvent: %v", err)
		}
	}
	if n := e.countEvents(t, r.ID, db.EventSessionReset); n != 2 {
		t.Fatalf("%d session_reset rows, want 2: only node lifecycle records are idempotent", n)
	}
}

func testInvalidJSON(t *testing.T, e *env) {
	r, l := e.runIn(t, fxRunning, nil)
	for _, data := range []string{`{"a":`, `not json`} {
		if _, err := e.s.RecordEvent(e.ctx, l, db.Event{Type: db.EventSessionReset, Data: json.RawMessage(data)}); err == nil {
			t.Fatalf("RecordEvent accepted data %q", data)
		}
	}
	if n := len(e.events(t, r.ID)); n != 2 {
		t.Fatalf("invalid events were stored: %d events, want 2", n)
	}
}
