package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"threadflow/db"
)

// cancelSet is the SET clause of every move to cancelled ($3 is the time): leaving the run clears
// its lease, pause and gate timers.
const cancelSet = `status = 'cancelled', lease_owner = '', lease_token = '', lease_expires_at = NULL, finished_at = $3,
	pause_kind = '', pause_node = '', gate_due_at = NULL, gate_remind_at = NULL, meta = meta - 'pause'`

// gateSets are the SET clauses of the moves a gate verdict makes ($3 is the time).
var gateSets = map[db.Op]string{
	db.OpApprove: `status = 'queued', queued_at = $3, pause_kind = '', pause_node = '', gate_due_at = NULL, gate_remind_at = NULL,
		meta = meta - 'pause'`,
	db.OpReject: cancelSet,
	db.OpCancel: cancelSet,
}

// ResolveGate answers a paused approval or loop gate. It locks the run, reads the gate's state, lets
// db.JudgeGate decide (who may answer, how many approvals open it, what a late answer gets) and
// applies the verdict in the same transaction; a refusal is committed and then returned.
func (s *Store) ResolveGate(ctx context.Context, g db.GateResolution) (db.GateResult, error) {
	if err := g.Check(); err != nil {
		return db.GateResult{}, err
	}
	now := s.now()
	var v db.GateVerdict
	err := s.inTx(ctx, func(tx pgx.Tx) error {
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

// lockRun reads the run and holds its row until the transaction ends.
func lockRun(ctx context.Context, tx pgx.Tx, runID string) (db.Run, error) {
	return scanRun(tx.QueryRow(ctx, `SELECT `+runColumns+` FROM runs WHERE id = $1 FOR UPDATE`, runID))
}

// gateState reads what JudgeGate needs about the gate g answers, with the run's row locked.
func gateState(ctx context.Context, tx pgx.Tx, g db.GateResolution) (db.GateState, error) {
	run, err := lockRun(ctx, tx, g.RunID)
	if errors.Is(err, pgx.ErrNoRows) {
		return db.GateState{}, &db.TransitionError{RunID: g.RunID, Op: db.OpApprove}
	}
	if err != nil {
		return db.GateState{}, err
	}
	st := db.GateState{Run: run, Node: g.Node}
	if st.Node == "" {
		st.Node = db.AskedGate(run)
	}
	if st.Node == "" {
		err = tx.QueryRow(ctx, `SELECT node_id FROM run_events WHERE run_id = $1 AND type = 'gate_requested'
			ORDER BY seq DESC LIMIT 1`, g.RunID).Scan(&st.Node)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return db.GateState{}, err
		}
	}
	if st.AskSeq, err = askSeq(ctx, tx, g.RunID, st.Node); err != nil {
		return db.GateState{}, err
	}
	rows, err := tx.Query(ctx, `SELECT `+eventColumns+` FROM run_events
		WHERE run_id = $1 AND node_id = $2 AND seq > $3 AND type IN ('gate_approval', 'gate_resolved') ORDER BY seq`, g.RunID, st.Node, st.AskSeq)
	if err != nil {
		return db.GateState{}, err
	}
	if st.After, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (db.Event, error) { return scanEvent(row) }); err != nil {
		return db.GateState{}, err
	}
	if g.ReplySeq > 0 {
		e, err := scanEvent(tx.QueryRow(ctx, `SELECT `+eventColumns+` FROM run_events WHERE run_id = $1 AND seq = $2`, g.RunID, g.ReplySeq))
		if err == nil {
			st.Reply = &e
		} else if !errors.Is(err, pgx.ErrNoRows) {
			return db.GateState{}, err
		}
	}
	return st, nil
}

// askSeq is the seq of the node's latest gate_requested, 0 if it was never asked.
func askSeq(ctx context.Context, tx pgx.Tx, runID, node string) (int64, error) {
	var seq int64
	err := tx.QueryRow(ctx, `SELECT COALESCE(max(seq), 0) FROM run_events WHERE run_id = $1 AND type = 'gate_requested' AND node_id = $2`,
		runID, node).Scan(&seq)
	return seq, err
}

// applyVerdict makes the verdict's transition (a compare-and-set on the gate the state was read
// for) and appends its events.
func applyVerdict(ctx context.Context, tx pgx.Tx, st db.GateState, v *db.GateVerdict, now time.Time) error {
	if v.Op != "" {
		r, err := scanRun(tx.QueryRow(ctx, `UPDATE runs SET `+gateSets[v.Op]+`
			WHERE id = $1 AND status = ANY($2) AND pause_kind IN ('approval', 'loop') AND pause_node = $4 RETURNING `+runColumns,
			st.Run.ID, fromStatuses(v.Op), now, st.Node))
		if errors.Is(err, pgx.ErrNoRows) {
			_, err = casFailed(ctx, tx, v.Op, st.Run.ID, nil)
		}
		if err != nil {
			return err
		}
		v.Result.Run = r
	}
	for _, e := range v.Events {
		if _, err := appendEvent(ctx, tx, e); err != nil {
			return err
		}
	}
	return nil
}

// RecordGateReply records a reply to the gate the run waits at that was neither a clear yes nor no,
// so a button can later answer the gate with its text.
func (s *Store) RecordGateReply(ctx context.Context, runID, node string, reply db.GateReplyData) (db.Event, error) {
	now := s.now()
	var out db.Event
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		run, err := lockRun(ctx, tx, runID)
		if errors.Is(err, pgx.ErrNoRows) {
			return &db.TransitionError{RunID: runID, Op: db.OpApprove}
		}
		if err != nil {
			return err
		}
		if db.AskedGate(run) != node || node == "" {
			return &db.TransitionError{RunID: runID, Op: db.OpApprove, Found: run.Status}
		}
		out, err = appendEvent(ctx, tx, db.Event{RunID: runID, Type: db.EventGateReply, NodeID: node, Data: db.MustJSON(reply), At: now})
		return err
	})
	return out, err
}

// reachFilter is the condition that keeps the runs in reach (db.Reach), given by reachArgs as the
// four query parameters from $first on; the zero Reach keeps every run.
func reachFilter(first int) string {
	p, c, u, now := fmt.Sprintf("$%d", first), fmt.Sprintf("$%d", first+1), fmt.Sprintf("$%d", first+2), fmt.Sprintf("$%d", first+3)
	platform := `split_part(runs.conversation_id, ':', 1)`
	return `(cardinality(` + p + `::text[]) + cardinality(` + c + `::text[]) + cardinality(` + u + `::text[]) = 0
		OR ` + platform + ` = ANY(` + p + `) OR runs.conversation_id = ANY(` + c + `)
		OR (` + platform + ` = ANY(` + u + `) AND NOT EXISTS (SELECT 1 FROM terminal_attachments a
			WHERE a.conversation_id = runs.conversation_id AND a.expires_at > ` + now + `::timestamptz)))`
}

// reachArgs are the parameters of reachFilter.
func reachArgs(r db.Reach, now time.Time) []any {
	return []any{append([]string{}, r.Platforms...), append([]string{}, r.Conversations...), append([]string{}, r.Unattended...), now}
}

// AttachTerminal records (or renews) a terminal's attachment to a conversation until ttl from now,
// and forgets attachments that expired (their terminals were killed).
func (s *Store) AttachTerminal(ctx context.Context, conversationID, owner string, ttl time.Duration) error {
	now := s.now()
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM terminal_attachments WHERE expires_at < $1`, now); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO terminal_attachments (conversation_id, owner, expires_at) VALUES ($1, $2, $3)
			ON CONFLICT (conversation_id, owner) DO UPDATE SET expires_at = excluded.expires_at`, conversationID, owner, now.Add(ttl))
		return err
	})
	if err != nil {
		return fmt.Errorf("attach terminal to %s: %w", conversationID, translate(err))
	}
	return nil
}

// DetachTerminal ends every attachment of a terminal process.
func (s *Store) DetachTerminal(ctx context.Context, owner string) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM terminal_attachments WHERE owner = $1`, owner); err != nil {
		return fmt.Errorf("detach terminal %s: %w", owner, translate(err))
	}
	return nil
}

// FireGateTimers fires every gate timer of a run in reach that is due, each in its own transaction that locks the run
// and reads it again, so a gate answered meanwhile, or a timer another replica fired, is left alone.
func (s *Store) FireGateTimers(ctx context.Context, reach db.Reach) ([]db.GateTimer, error) {
	now := s.now()
	rows, err := s.pool.Query(ctx, `SELECT id FROM runs WHERE status = 'paused' AND pause_kind = 'approval'
		AND (gate_due_at <= $1 OR gate_remind_at <= $1) AND `+reachFilter(2)+` ORDER BY id LIMIT 100`, append([]any{now}, reachArgs(reach, now)...)...)
	if err != nil {
		return nil, translate(err)
	}
	ids, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, translate(err)
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
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		run, err := lockRun(ctx, tx, id)
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
			if _, err := tx.Exec(ctx, `UPDATE runs SET gate_remind_at = NULL WHERE id = $1`, id); err != nil {
				return err
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
	var next *time.Time
	err := s.pool.QueryRow(ctx, `SELECT LEAST(
			(SELECT min(gate_due_at) FROM runs WHERE gate_due_at IS NOT NULL AND status = 'paused' AND `+reachFilter(1)+`),
			(SELECT min(gate_remind_at) FROM runs WHERE gate_remind_at IS NOT NULL AND status = 'paused' AND `+reachFilter(1)+`))`,
		reachArgs(reach, s.now())...).Scan(&next)
	if err != nil {
		return time.Time{}, false, translate(err)
	}
	return orZero(next), next != nil, nil
}

// nullTime stores the zero time as NULL.
func nullTime(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
