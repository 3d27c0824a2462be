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
