package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"threadflow/db"
)

// ResolveGate answers a paused approval or loop gate. It reads the gate's state, lets db.JudgeGate
// decide (who may answer, how many approvals open it, what a late answer gets) and applies the
// verdict, all in one write transaction; a refusal is committed and then returned as the error.
func (s *Store) ResolveGate(ctx context.Context, g db.GateResolution) (db.GateResult, error) {
	if err := g.Check(); err != nil {
		return db.GateResult{}, err
	}
	now := s.clock()
	var v db.GateVerdict
	err := s.write(ctx, func(tx *wtx) error {
		st, err := gateState(ctx, tx, g)
		if err != nil {
			return err
		}
		v = db.JudgeGate(st, g, now)
		return applyVerdict(ctx, tx, st, &v, now)
	})
	if err != nil {
		return db.GateResult{}, err
	}
	return v.Result, v.Err
}

// gateState reads what JudgeGate needs about the gate g answers.
func gateState(ctx context.Context, tx *wtx, g db.GateResolution) (db.GateState, error) {
	run, err := getRun(ctx, tx, g.RunID)
	if isNotFound(err) {
		return db.GateState{}, &db.TransitionError{RunID: g.RunID, Op: db.OpApprove}
	}
	if err != nil {
		return db.GateState{}, fmt.Errorf("resolve gate of run %s: %w", g.RunID, err)
	}
	st := db.GateState{Run: run, Node: g.Node}
	if st.Node == "" {
		st.Node = db.AskedGate(run)
	}
	if st.Node == "" {
		err = tx.QueryRowContext(ctx, `SELECT node_id FROM run_events WHERE run_id = ? AND type = 'gate_requested'
			ORDER BY seq DESC LIMIT 1`, g.RunID).Scan(&st.Node)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return db.GateState{}, fmt.Errorf("resolve gate of run %s: %w", g.RunID, translate(err))
		}
	}
	if st.AskSeq, err = askSeq(ctx, tx, g.RunID, st.Node); err != nil {
		return db.GateState{}, err
	}
	if st.After, err = gateEvents(ctx, tx, g.RunID, st.Node, st.AskSeq); err != nil {
		return db.GateState{}, err
	}
	if g.ReplySeq > 0 {
		e, err := scanEvent(tx.QueryRowContext(ctx, `SELECT `+eventColumns+` FROM run_events WHERE run_id = ? AND seq = ?`, g.RunID, g.ReplySeq))
		if err == nil {
			st.Reply = &e
		} else if !isNotFound(err) {
			return db.GateState{}, fmt.Errorf("resolve gate of run %s: %w", g.RunID, err)
		}
	}
	return st, nil
}

// askSeq is the seq of the node's latest gate_requested, 0 if it was never asked.
func askSeq(ctx context.Context, tx *wtx, runID, node string) (int64, error) {
	var seq int64
	err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) FROM run_events WHERE run_id = ? AND type = 'gate_requested' AND node_id = ?`,
		runID, node).Scan(&seq)
	if err != nil {
		return 0, fmt.Errorf("read gate %s of run %s: %w", node, runID, translate(err))
	}
	return seq, nil
}

// gateEvents are the approvals and resolutions of the node after its latest question.
func gateEvents(ctx context.Context, tx *wtx, runID, node string, after int64) ([]db.Event, error) {
	rows, err := tx.QueryContext(ctx, `SELECT `+eventColumns+` FROM run_events
		WHERE run_id = ? AND node_id = ? AND seq > ? AND type IN ('gate_approval', 'gate_resolved') ORDER BY seq`, runID, node, after)
	if err != nil {
		return nil, fmt.Errorf("read gate %s of run %s: %w", node, runID, translate(err))
	}
	defer rows.Close()
	var out []db.Event
	for rows.Next() {
		e, err := scanEvent(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, translate(rows.Err())
}

// gateSets are the SET clauses of the moves a gate verdict makes. Leaving the gate clears the pause
// and its timers.
var gateSets = map[db.Op]string{
	db.OpApprove: `status = 'queued', queued_at = ?, pause_kind = '', pause_node = '', gate_due_at = NULL, gate_remind_at = NULL,
		meta = json_remove(meta, '$.pause')`,
	db.OpReject: cancelSet,
	db.OpCancel: cancelSet,
}

// applyVerdict makes the verdict's transition (a compare-and-set on the gate the state was read
// for) and appends its events.
func applyVerdict(ctx context.Context, tx *wtx, st db.GateState, v *db.GateVerdict, now time.Time) error {
	if v.Op != "" {
		c := cas{op: v.Op, runID: st.Run.ID, set: gateSets[v.Op], args: []any{micros(now)},
			where: `pause_kind IN ('approval', 'loop') AND pause_node = ?`, wargs: []any{st.Node}}
		r, _, err := c.run(ctx, tx)
		if err != nil {
			return err
		}
		v.Result.Run = r
	}
	for _, e := range v.Events {
		if _, err := appendEvent(ctx, tx, st.Run.ID, newEvent{typ: e.Type, node: e.NodeID, data: e.Data}, now); err != nil {
			return err
		}
	}
	return nil
}

// RecordGateReply records a reply to the gate the run waits at that was neither a clear yes nor no,
// so a button can later answer the gate with its text.
func (s *Store) RecordGateReply(ctx context.Context, runID, node string, reply db.GateReplyData) (db.Event, error) {
	now := s.clock()
	var out db.Event
	err := s.write(ctx, func(tx *wtx) error {
		run, err := getRun(ctx, tx, runID)
		if err != nil {
			return fmt.Errorf("record reply to run %s: %w", runID, err)
		}
		if db.AskedGate(run) != node || node == "" {
			return &db.TransitionError{RunID: runID, Op: db.OpApprove, Found: run.Status}
		}
		out, err = appendEvent(ctx, tx, runID, newEvent{typ: db.EventGateReply, node: node, data: db.MustJSON(reply)}, now)
		return err
	})
	return out, err
}

// FireGateTimers fires every gate timer of a run in reach that is due: each in its own transaction that reads the run
// again, so a gate answered meanwhile, or a timer another process fired, is left alone.
func (s *Store) FireGateTimers(ctx context.Context, reach db.Reach) ([]db.GateTimer, error) {
	now := s.clock()
	filter, fargs := reachFilter(reach, now)
	rows, err := s.r.QueryContext(ctx, `SELECT id FROM runs WHERE status = 'paused' AND pause_kind = 'approval'
		AND (gate_due_at <= ? OR gate_remind_at <= ?)`+filter+` ORDER BY id LIMIT 100`, append([]any{micros(now), micros(now)}, fargs...)...)
	if err != nil {
		return nil, fmt.Errorf("find due gate timers: %w", translate(err))
	}
	ids, err := scanIDs(rows)
	if err != nil {
		return nil, fmt.Errorf("find due gate timers: %w", err)
	}
	var fired []db.GateTimer
	for _, id := range ids {
		t, ok, err := s.fireTimer(ctx, id, now)
		if err != nil {
			return fired, err
		}
		if ok {
			fired = append(fired, t)
		}
	}
	return fired, nil
}

func (s *Store) fireTimer(ctx context.Context, id string, now time.Time) (db.GateTimer, bool, error) {
	var out db.GateTimer
	fired := false
	err := s.write(ctx, func(tx *wtx) error {
		run, err := getRun(ctx, tx, id)
		if err != nil || run.Meta.Pause == nil {
			return err
		}
		ask, err := askSeq(ctx, tx, id, run.Meta.Pause.Node)
		if err != nil {
			return err
		}
		v, kind, ok := db.JudgeTimer(run, ask, now)
		if !ok {
			return nil
		}
		if kind == db.TimerReminder {
			if _, err := tx.ExecContext(ctx, `UPDATE runs SET gate_remind_at = NULL WHERE id = ?`, id); err != nil {
				return fmt.Errorf("fire reminder of run %s: %w", id, translate(err))
			}
		}
		st := db.GateState{Run: run, Node: run.Meta.Pause.Node, AskSeq: ask}
		if err := applyVerdict(ctx, tx, st, &v, now); err != nil {
			return err
		}
		out, fired = db.GateTimer{Kind: kind, Run: v.Result.Run, Pause: *run.Meta.Pause}, true
		return nil
	})
	return out, fired, err
}

// NextGateTimer returns when the next gate timer is due; ok is false when no gate has one.
func (s *Store) NextGateTimer(ctx context.Context, reach db.Reach) (time.Time, bool, error) {
	var next sql.NullInt64
	filter, fargs := reachFilter(reach, s.clock())
	err := s.r.QueryRowContext(ctx, `SELECT MIN(t) FROM (
			SELECT MIN(gate_due_at) AS t FROM runs WHERE gate_due_at IS NOT NULL AND status = 'paused'`+filter+`
			UNION ALL SELECT MIN(gate_remind_at) FROM runs WHERE gate_remind_at IS NOT NULL AND status = 'paused'`+filter+`)`,
		append(append([]any{}, fargs...), fargs...)...).Scan(&next)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("find next gate timer: %w", translate(err))
	}
	return fromNull(next), next.Valid, nil
}
