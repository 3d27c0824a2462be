package sqlite

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"threadflow/db"
)

// ResolveGate answers a paused approval or loop gate once. The pause node is part of the
// compare-and-set, so an answer meant for one gate never resolves another.
func (s *Store) ResolveGate(ctx context.Context, g db.GateResolution) (db.Run, error) {
	op, set, err := resolution(g.Decision)
	if err != nil {
		return db.Run{}, fmt.Errorf("resolve gate of run %s: %w", g.RunID, err)
	}
	now := s.clock()
	var out db.Run
	err = s.write(ctx, func(tx *wtx) error {
		node, err := gateNode(ctx, tx, g)
		if err != nil {
			return err
		}
		c := cas{op: op, runID: g.RunID, set: set, args: []any{micros(now)},
			where: `pause_kind IN (?, ?) AND pause_node = ?`,
			wargs: []any{string(db.PauseApproval), string(db.PauseLoop), node}}
		q, args := c.query()
		r, err := scanRun(tx.QueryRowContext(ctx, q, args...))
		if isNotFound(err) {
			return alreadyResolved(ctx, tx, g.RunID, node, op)
		}
		if err != nil {
			return fmt.Errorf("resolve gate of run %s: %w", g.RunID, err)
		}
		out = r
		return appendResolution(ctx, tx, r.ID, node, g, now)
	})
	return out, err
}

// resolution maps a decision to its transition and SET clause. Leaving paused clears the pause.
func resolution(d db.GateDecision) (db.Op, string, error) {
	switch d {
	case db.DecisionApprove, db.DecisionAnswer:
		return db.OpApprove, `status = 'queued', queued_at = ?, pause_kind = '', pause_node = '',
			meta = json_remove(meta, '$.pause')`, nil
	case db.DecisionReject:
		return db.OpReject, `status = 'cancelled', finished_at = ?, pause_kind = '', pause_node = '',
			lease_owner = '', lease_token = '', lease_expires_at = NULL, meta = json_remove(meta, '$.pause')`, nil
	}
	return "", "", fmt.Errorf("unknown gate decision %q; use approve, reject or answer", d)
}

// gateNode is the gate the resolution answers: the one it names, or else the gate the run is
// paused at, or else (the run moved on) the gate it asked last, so a late answer still learns who
// answered first.
func gateNode(ctx context.Context, tx *wtx, g db.GateResolution) (string, error) {
	if g.Node != "" {
		return g.Node, nil
	}
	var node string
	err := tx.QueryRowContext(ctx, `SELECT COALESCE(NULLIF(r.pause_node, ''),
			(SELECT e.node_id FROM run_events e WHERE e.run_id = r.id AND e.type = ? ORDER BY e.seq DESC LIMIT 1), '')
		FROM runs r WHERE r.id = ?`, string(db.EventGateRequested), g.RunID).Scan(&node)
	if err != nil && !isNotFound(translate(err)) {
		return "", fmt.Errorf("resolve gate of run %s: %w", g.RunID, translate(err))
	}
	return node, nil
}

func appendResolution(ctx context.Context, tx *wtx, runID, node string, g db.GateResolution, at time.Time) error {
	data := object(resolvedData{Decision: g.Decision, By: g.By, Text: g.Text})
	if _, err := appendEvent(ctx, tx, runID, newEvent{typ: db.EventGateResolved, node: node, data: data}, at); err != nil {
		return err
	}
	if g.Decision != db.DecisionReject {
		return nil
	}
	cancelled := object(map[string]string{"by": g.By, "reason": g.Text})
	_, err := appendEvent(ctx, tx, runID, newEvent{typ: db.EventRunCancelled, data: cancelled}, at)
	return err
}

// resolvedData is the data of a gate_resolved event.
type resolvedData struct {
	Decision db.GateDecision `json:"decision"`
	By       string          `json:"by"`
	Text     string          `json:"text"`
}

// alreadyResolved explains a refused resolution: a *db.GateResolvedError when the gate's latest ask
// was already answered, a *db.TransitionError otherwise.
func alreadyResolved(ctx context.Context, tx *wtx, runID, node string, op db.Op) error {
	var (
		data string
		at   int64
	)
	err := tx.QueryRowContext(ctx, `SELECT data, at FROM run_events
		WHERE run_id = ? AND type = ? AND node_id = ? AND seq > COALESCE(
			(SELECT MAX(seq) FROM run_events WHERE run_id = ? AND type = ? AND node_id = ?), 0)
		ORDER BY seq LIMIT 1`,
		runID, string(db.EventGateResolved), node, runID, string(db.EventGateRequested), node).Scan(&data, &at)
	if err != nil {
		if err = translate(err); !isNotFound(err) {
			return fmt.Errorf("resolve gate of run %s: %w", runID, err)
		}
		_, _, err = refuse(ctx, tx, refusal{op: op, runID: runID})
		return err
	}
	var first resolvedData
	if err := json.Unmarshal([]byte(data), &first); err != nil {
		return fmt.Errorf("resolve gate of run %s: stored resolution is not valid: %w", runID, err)
	}
	return &db.GateResolvedError{RunID: runID, Node: node, Decision: first.Decision, By: first.By, At: fromMicros(at)}
}
