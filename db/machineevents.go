package db

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"reflect"
)

// opRecord names event writes in errors; recording an event is not a state transition.
const opRecord Op = "record event"

// RecordEvent appends e under a held lease. Node lifecycle types are keyed by (run, type, node,
// attempt): replaying one with the same data returns the stored event, with other data it is a
// conflict. node_completed is progress, so it resets the rescue counter.
//
// Every node writes two events, so the common case (lease held, nothing recorded yet) is one
// compare-and-set statement (Driver.AppendLeased); only when it appends nothing does a transaction
// read why and decide.
func (m *Machine) RecordEvent(ctx context.Context, l Lease, e Event) (Event, error) {
	e, err := m.prepareEvent(l, e)
	if err != nil {
		return Event{}, err
	}
	if out, ok, err := m.Driver.AppendLeased(ctx, l, e, e.Type == EventNodeCompleted); err != nil || ok {
		return out, err
	}
	return m.decideEvent(ctx, l, e)
}

// RecordEvents records es in order, each exactly as RecordEvent would one after the other, with
// one commit for all of them when each is a plain append under the lease (Driver.AppendLeasedAll:
// on PostgreSQL one round trip and one WAL flush instead of one per event). The ones the batch did
// not append are then recorded one by one, which decides why (a replay, a lost lease). On a
// failed batch every event gets its error: nothing of it was written.
func (m *Machine) RecordEvents(ctx context.Context, l Lease, es []Event) ([]Event, []error) {
	outs, errs := make([]Event, len(es)), make([]error, len(es))
	if len(es) == 1 {
		outs[0], errs[0] = m.RecordEvent(ctx, l, es[0])
		return outs, errs
	}
	prepared, resets := make([]Event, len(es)), make([]bool, len(es))
	for i, e := range es {
		p, err := m.prepareEvent(l, e)
		if err != nil { // a malformed event fails alone, as it would on its own
			for j := range es {
				outs[j], errs[j] = m.RecordEvent(ctx, l, es[j])
			}
			return outs, errs
		}
		prepared[i], resets[i] = p, p.Type == EventNodeCompleted
	}
	appended, ok, err := m.Driver.AppendLeasedAll(ctx, l, prepared, resets)
	for i := range es {
		switch {
		case err != nil:
			errs[i] = err
		case ok[i]:
			outs[i] = appended[i]
		default:
			outs[i], errs[i] = m.decideEvent(ctx, l, prepared[i])
		}
	}
	return outs, errs
}

// prepareEvent checks e and stamps it with its run and time.
func (m *Machine) prepareEvent(l Lease, e Event) (Event, error) {
	if e.Type == "" {
		return Event{}, fmt.Errorf("record event of run %s: the event has no type", l.RunID)
	}
	data, err := objectData(e.Data)
	if err != nil {
		return Event{}, fmt.Errorf("record %s for run %s: %w", e.Type, l.RunID, err)
	}
	e.RunID, e.Data, e.At = l.RunID, data, m.Now()
	return e, nil
}

// decideEvent records e in a transaction that reads why the compare-and-set appended nothing: a
// lost lease is refused, a recorded copy is a replay, and otherwise (a concurrent copy lost the
// race, or the counter needed a reset) it appends.
func (m *Machine) decideEvent(ctx context.Context, l Lease, e Event) (Event, error) {
	var out Event
	err := m.Driver.InTx(ctx, func(tx DriverTx) error {
		lease, err := tx.LeaseForEvent(ctx, l, e)
		if err != nil {
			return fmt.Errorf("record %s for run %s: %w", e.Type, l.RunID, err)
		}
		if !lease.Held {
			_, _, err = ExplainMiss(ctx, tx, opRecord, l.RunID, l.Token, true)
			return err
		}
		if lease.Found {
			out, err = replayLifecycle(lease.Stored, e)
			return err
		}
		// One statement per event fewer on the common path: a run never rescued has nothing to reset.
		if e.Type == EventNodeCompleted && lease.Recoveries > 0 {
			if err := tx.ResetRecoveries(ctx, l.RunID); err != nil {
				return fmt.Errorf("record %s for run %s: %w", e.Type, l.RunID, err)
			}
		}
		out, err = tx.AppendEvent(ctx, e)
		return err
	})
	return out, err
}

// replayLifecycle decides a repeated lifecycle write: the same data (compared as JSON values, so
// key order and spacing do not matter) is a no-op; other data contradicts history.
func replayLifecycle(stored, e Event) (Event, error) {
	var a, b any
	if json.Unmarshal(stored.Data, &a) == nil && json.Unmarshal(e.Data, &b) == nil && reflect.DeepEqual(a, b) {
		return stored, nil
	}
	return Event{}, fmt.Errorf("record %s of node %q attempt %d for run %s: already recorded with other data: %w",
		e.Type, e.NodeID, e.Attempt, stored.RunID, ErrConflict)
}

// objectData checks event data is one JSON object and compacts it; empty data is the empty object.
func objectData(raw json.RawMessage) (json.RawMessage, error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return json.RawMessage("{}"), nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, fmt.Errorf("event data must be a JSON object, got %.40q", raw)
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, raw); err != nil {
		return nil, fmt.Errorf("event data must be a JSON object: %w", err)
	}
	return buf.Bytes(), nil
}
