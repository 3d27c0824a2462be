package sqlite

import (
	"context"
	"fmt"
	"strings"
	"time"

	"go.uber.org/zap"

	"threadflow/db"
)

// transition runs c and, unless it was a replay, appends the events that events derives from the
// updated run, all in one transaction.
func (s *Store) transition(ctx context.Context, c cas, at time.Time, events func(r db.Run) []newEvent) (db.Run, error) {
	var out db.Run
	err := s.write(ctx, func(tx *wtx) error {
		r, replayed, err := c.run(ctx, tx)
		if err != nil || replayed {
			out = r
			return err
		}
		for _, e := range events(r) {
			if _, err := appendEvent(ctx, tx, r.ID, e, at); err != nil {
				return err
			}
		}
		out = r
		return nil
	})
	if err == nil {
		s.log.Debug("sqlite.run_transitioned", zap.String("run", c.runID), zap.String("op", string(c.op)), zap.String("status", string(out.Status)))
	}
	return out, err
}

// one is the events func of a transition that appends a single event.
func one(e newEvent) func(db.Run) []newEvent {
	return func(db.Run) []newEvent { return []newEvent{e} }
}

// ClaimRun moves the oldest queued run in reach to running under a fresh lease.
func (s *Store) ClaimRun(ctx context.Context, owner string, ttl time.Duration, reach db.Reach) (db.Run, error) {
	now := s.clock()
	var out db.Run
	err := s.write(ctx, func(tx *wtx) error {
		var id string
		query, args := claimQuery(reach, now)
		err := tx.QueryRowContext(ctx, query, args...).Scan(&id)
		if err != nil {
			if isNotFound(translate(err)) {
				return db.ErrNoQueuedRun
			}
			return fmt.Errorf("claim run: %w", translate(err))
		}
		c := cas{op: db.OpClaim, runID: id,
			set:  `status = 'running', lease_owner = ?, lease_token = ?, lease_expires_at = ?, heartbeat_at = ?, started_at = COALESCE(started_at, ?)`,
			args: []any{owner, db.NewToken(), micros(now.Add(ttl)), micros(now), micros(now)}}
		r, _, err := c.run(ctx, tx)
		if err != nil {
			return err
		}
		out = r
		_, err = appendEvent(ctx, tx, id, newEvent{typ: db.EventRunClaimed, data: object(db.RunClaimedData{Owner: owner})}, now)
		return err
	})
	return out, err
}

// claimQuery selects the oldest queued run in reach.
func claimQuery(reach db.Reach, now time.Time) (string, []any) {
	filter, args := reachFilter(reach, now)
	return `SELECT id FROM runs WHERE status = ?` + filter + ` ORDER BY queued_at, id LIMIT 1`, append([]any{string(db.StatusQueued)}, args...)
}

// runPlatform is the platform of a run: the first part of its conversation id.
const runPlatform = "substr(runs.conversation_id, 1, instr(runs.conversation_id, ':') - 1)"

// reachFilter is the condition (and its arguments) that keeps the runs in reach (db.Reach) at now;
// the zero Reach keeps every run.
func reachFilter(r db.Reach, now time.Time) (string, []any) {
	if r.Every() {
		return "", nil
	}
	var (
		conds []string
		args  []any
	)
	if len(r.Platforms) > 0 {
		conds = append(conds, runPlatform+" IN "+placeholders(len(r.Platforms)))
		args = appendStrings(args, r.Platforms)
	}
	if len(r.Conversations) > 0 {
		conds = append(conds, "runs.conversation_id IN "+placeholders(len(r.Conversations)))
		args = appendStrings(args, r.Conversations)
	}
	if len(r.Unattended) > 0 {
		conds = append(conds, "("+runPlatform+" IN "+placeholders(len(r.Unattended))+` AND NOT EXISTS (SELECT 1 FROM terminal_attachments a
			WHERE a.conversation_id = runs.conversation_id AND a.expires_at > ?))`)
		args = append(appendStrings(args, r.Unattended), micros(now))
	}
	return " AND (" + strings.Join(conds, " OR ") + ")", args
}

func placeholders(n int) string { return "(?" + strings.Repeat(", ?", n-1) + ")" }

func appendStrings(args []any, ss []string) []any {
	for _, s := range ss {
		args = append(args, s)
	}
	return args
}

// AttachTerminal records (or renews) a terminal's attachment to a conversation until ttl from now,
// and forgets attachments that expired (their terminals were killed).
func (s *Store) AttachTerminal(ctx context.Context, conversationID, owner string, ttl time.Duration) error {
	now := s.clock()
	return s.write(ctx, func(tx *wtx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM terminal_attachments WHERE expires_at < ?`, micros(now)); err != nil {
			return fmt.Errorf("forget expired terminal attachments: %w", translate(err))
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO terminal_attachments (conversation_id, owner, expires_at) VALUES (?, ?, ?)
			ON CONFLICT (conversation_id, owner) DO UPDATE SET expires_at = excluded.expires_at`, conversationID, owner, micros(now.Add(ttl)))
		if err != nil {
			return fmt.Errorf("attach terminal to %s: %w", conversationID, translate(err))
		}
		return nil
	})
}

// DetachTerminal ends every attachment of a terminal process.
func (s *Store) DetachTerminal(ctx context.Context, owner string) error {
	return s.write(ctx, func(tx *wtx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM terminal_attachments WHERE owner = ?`, owner); err != nil {
			return fmt.Errorf("detach terminal %s: %w", owner, translate(err))
		}
		return nil
	})
}

// opHeartbeat names heartbeat writes in errors; a heartbeat is not a state transition.
const opHeartbeat db.Op = "heartbeat"

// Heartbeat extends a held lease by ttl from now.
func (s *Store) Heartbeat(ctx context.Context, l db.Lease, ttl time.Duration) error {
	now := s.clock()
	return s.write(ctx, func(tx *wtx) error {
		res, err := tx.ExecContext(ctx, `UPDATE runs SET lease_expires_at = ?, heartbeat_at = ?
			WHERE id = ? AND status = 'running' AND lease_token = ? AND lease_token <> ''`,
			micros(now.Add(ttl)), micros(now), l.RunID, l.Token)
		if err != nil {
			return fmt.Errorf("heartbeat run %s: %w", l.RunID, translate(err))
		}
		if n, err := res.RowsAffected(); err != nil || n == 1 {
			return translate(err)
		}
		_, _, err = refuse(ctx, tx, refusal{op: opHeartbeat, runID: l.RunID, token: l.Token, lease: true})
		return err
	})
}

// PauseRun moves running -> paused. A gate pause appends gate_requested carrying the pause, so the
// gate's history says what was asked; a recovery pause appends run_paused and records the error and
// the hint the user sees.
func (s *Store) PauseRun(ctx context.Context, l db.Lease, p db.Pause) (db.Run, error) {
	if !p.Kind.IsGate() && p.Kind != db.PauseRecovery {
		return db.Run{}, fmt.Errorf("pause run %s: unknown pause kind %q; use approval, loop or recovery", l.RunID, p.Kind)
	}
	pause := object(p)
	c := cas{op: db.OpPause, runID: l.RunID, token: l.Token,
		set: `status = 'paused', pause_kind = ?, pause_node = ?, gate_due_at = ?, gate_remind_at = ?, lease_expires_at = NULL,
			meta = json_set(meta, '$.pause', json(?))`,
		args: []any{string(p.Kind), p.Node, nullMicros(p.DueAt), nullMicros(p.RemindAt), string(pause)}}
	ev := newEvent{typ: db.EventGateRequested, node: p.Node, data: pause}
	if p.Kind == db.PauseRecovery {
		lastErr := object(db.RunError{Node: p.Node, Class: db.ClassInfra, Message: p.Error})
		c.set = `status = 'paused', pause_kind = ?, pause_node = ?, gate_due_at = ?, gate_remind_at = ?, lease_expires_at = NULL,
			meta = json_set(meta, '$.pause', json(?), '$.resume_hint', ?, '$.last_error', json(?))`
		c.args = append(c.args, p.ResumeHint, string(lastErr))
		ev.typ = db.EventRunPaused
	}
	return s.transition(ctx, c, s.clock(), one(ev))
}

// CompleteRun moves running -> completed. The lease token stays so a replay is recognised.
func (s *Store) CompleteRun(ctx context.Context, l db.Lease, output string) (db.Run, error) {
	now := s.clock()
	c := cas{op: db.OpComplete, runID: l.RunID, token: l.Token,
		set:  `status = 'completed', lease_expires_at = NULL, finished_at = ?, meta = json_set(meta, '$.output', ?)`,
		args: []any{micros(now), output}}
	return s.transition(ctx, c, now, one(newEvent{typ: db.EventRunCompleted}))
}

// FailRun moves running -> failed. The lease token stays so a replay is recognised.
func (s *Store) FailRun(ctx context.Context, l db.Lease, e db.RunError) (db.Run, error) {
	now := s.clock()
	reason := object(e)
	c := cas{op: db.OpFail, runID: l.RunID, token: l.Token,
		set:  `status = 'failed', lease_expires_at = NULL, finished_at = ?, meta = json_set(meta, '$.last_error', json(?))`,
		args: []any{micros(now), string(reason)}}
	return s.transition(ctx, c, now, one(newEvent{typ: db.EventRunFailed, node: e.Node, data: reason}))
}

// ReleaseRun hands a running run back to the queue. It keeps its queued_at, so it is claimed again
// before runs queued after it.
func (s *Store) ReleaseRun(ctx context.Context, l db.Lease) (db.Run, error) {
	c := cas{op: db.OpRelease, runID: l.RunID, token: l.Token,
		set: `status = 'queued', lease_owner = '', lease_token = '', lease_expires_at = NULL`}
	data := object(db.RunReleasedData{Owner: l.Owner})
	return s.transition(ctx, c, s.clock(), one(newEvent{typ: db.EventRunReleased, data: data}))
}

// ResumeRun moves failed or recovery-paused -> queued. A gate pause is answered with ResolveGate,
// never resumed. Leaving paused clears the pause.
func (s *Store) ResumeRun(ctx context.Context, runID, by string) (db.Run, error) {
	now := s.clock()
	c := cas{op: db.OpResume, runID: runID,
		set: `status = 'queued', attempt = attempt + 1, pause_kind = '', pause_node = '', queued_at = ?, finished_at = NULL,
			meta = json_set(json_remove(meta, '$.pause'), '$.resumed_from', status)`,
		args:  []any{micros(now)},
		where: `status <> 'paused' OR pause_kind = ?`, wargs: []any{string(db.PauseRecovery)}}
	return s.transition(ctx, c, now, func(r db.Run) []newEvent {
		data := object(db.ResumeRequestedData{By: by, From: r.Meta.ResumedFrom})
		return []newEvent{{typ: db.EventResumeRequested, data: data}}
	})
}

// cancelSet is the SET clause of every move to cancelled: leaving the run clears its lease, pause
// and gate timers.
const cancelSet = `status = 'cancelled', lease_owner = '', lease_token = '', lease_expires_at = NULL, finished_at = ?,
	pause_kind = '', pause_node = '', gate_due_at = NULL, gate_remind_at = NULL, meta = json_remove(meta, '$.pause')`

// CancelRun abandons a run. Clearing the lease makes the worker's next write fail with
// ErrLeaseLost, which is how a running worker learns it must stop.
func (s *Store) CancelRun(ctx context.Context, runID, by, reason string) (db.Run, error) {
	now := s.clock()
	c := cas{op: db.OpCancel, runID: runID,
		set:  cancelSet,
		args: []any{micros(now)}}
	data := object(db.CancelData{By: by, Reason: reason})
	return s.transition(ctx, c, now, one(newEvent{typ: db.EventRunCancelled, data: data}))
}
