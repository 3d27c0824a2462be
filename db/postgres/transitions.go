package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"threadflow/db"
)

// opHeartbeat names Heartbeat in the TransitionError of a worker whose lease is gone.
const opHeartbeat db.Op = "heartbeat"

// claimSQL takes the oldest queued run. SKIP LOCKED lets concurrent claimers pass over a run another
// claimer has locked instead of waiting for it and then finding it taken.
var claimSQL = `UPDATE runs SET status = 'running', lease_owner = $2, lease_token = $3,
	lease_expires_at = $4, heartbeat_at = $5, started_at = COALESCE(started_at, $5)
WHERE id = (SELECT id FROM runs WHERE status = ANY($1)
		AND ` + reachFilter(6) + `
	ORDER BY queued_at, id LIMIT 1 FOR UPDATE SKIP LOCKED)
	AND status = ANY($1)
RETURNING ` + runColumns

// ClaimRun moves the oldest queued run to running under a fresh lease for owner, valid for ttl.
func (s *Store) ClaimRun(ctx context.Context, owner string, ttl time.Duration, reach db.Reach) (db.Run, error) {
	if owner == "" || ttl <= 0 {
		return db.Run{}, fmt.Errorf("claim run: need a worker name and a positive lease duration (got %q, %s)", owner, ttl)
	}
	now := s.now()
	var out db.Run
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		args := append([]any{fromStatuses(db.OpClaim), owner, db.NewToken(), now.Add(ttl), now}, reachArgs(reach, now)...)
		r, err := scanRun(tx.QueryRow(ctx, claimSQL, args...))
		if errors.Is(err, pgx.ErrNoRows) {
			return db.ErrNoQueuedRun
		}
		if err != nil {
			return err
		}
		out = r
		_, err = appendEvent(ctx, tx, event(r, db.EventRunClaimed, "", now, db.RunClaimedData{Owner: owner}))
		return err
	})
	return out, err
}

// Heartbeat extends a held lease by ttl from now.
func (s *Store) Heartbeat(ctx context.Context, l db.Lease, ttl time.Duration) error {
	if ttl <= 0 {
		return fmt.Errorf("heartbeat run %s: lease duration must be positive, got %s", l.RunID, ttl)
	}
	now := s.now()
	return s.inTx(ctx, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE runs SET lease_expires_at = $3, heartbeat_at = $4
			WHERE id = $1 AND status = 'running' AND lease_token = $2`, l.RunID, l.Token, now.Add(ttl), now)
		if err != nil || tag.RowsAffected() == 1 {
			return err
		}
		_, err = casFailed(ctx, tx, opHeartbeat, l.RunID, &l)
		return err
	})
}

// PauseRun moves running -> paused. A gate pause records gate_requested; a recovery pause records
// run_paused and keeps the error and its hint in meta, where status output shows them.
func (s *Store) PauseRun(ctx context.Context, l db.Lease, p db.Pause) (db.Run, error) {
	if err := validPause(p); err != nil {
		return db.Run{}, fmt.Errorf("pause run %s: %w", l.RunID, err)
	}
	patch := db.Meta{Pause: &p}
	typ := db.EventGateRequested
	if p.Kind == db.PauseRecovery {
		typ = db.EventRunPaused
		patch.ResumeHint = p.ResumeHint
		patch.LastError = &db.RunError{Node: p.Node, Class: db.ClassInfra, Message: p.Error}
	}
	now := s.now()
	return s.transition(ctx, cas{
		op: db.OpPause, runID: l.RunID, lease: &l,
		query: `UPDATE runs SET status = 'paused', pause_kind = $4, pause_node = $5, lease_expires_at = NULL,
			meta = meta || $6::jsonb, gate_due_at = $7, gate_remind_at = $8
		WHERE id = $1 AND status = ANY($2) AND lease_token = $3 RETURNING ` + runColumns,
		args: []any{l.RunID, fromStatuses(db.OpPause), l.Token, string(p.Kind), p.Node, []byte(mustJSON(patch)),
			nullTime(p.DueAt), nullTime(p.RemindAt)},
		events: func(r db.Run) []db.Event { return []db.Event{event(r, typ, p.Node, now, p)} },
	})
}

// validPause rejects pauses the run could never leave.
func validPause(p db.Pause) error {
	switch {
	case p.Kind.IsGate() && p.Node == "":
		return errors.New("a gate pause needs the gate's node id")
	case p.Kind.IsGate(), p.Kind == db.PauseRecovery:
		return nil
	}
	return fmt.Errorf("unknown pause kind %q (want approval, loop or recovery)", p.Kind)
}

// CompleteRun moves running -> completed with the final output.
func (s *Store) CompleteRun(ctx context.Context, l db.Lease, output string) (db.Run, error) {
	now := s.now()
	return s.transition(ctx, cas{
		op: db.OpComplete, runID: l.RunID, lease: &l,
		query: `UPDATE runs SET status = 'completed', lease_expires_at = NULL, finished_at = $4,
			meta = meta || $5::jsonb
		WHERE id = $1 AND status = ANY($2) AND lease_token = $3 RETURNING ` + runColumns,
		args:   []any{l.RunID, fromStatuses(db.OpComplete), l.Token, now, []byte(mustJSON(db.Meta{Output: output}))},
		events: func(r db.Run) []db.Event { return []db.Event{event(r, db.EventRunCompleted, "", now, db.NoData{})} },
	})
}

// FailRun moves running -> failed with the reason, which stays in meta.last_error.
func (s *Store) FailRun(ctx context.Context, l db.Lease, e db.RunError) (db.Run, error) {
	now := s.now()
	return s.transition(ctx, cas{
		op: db.OpFail, runID: l.RunID, lease: &l,
		query: `UPDATE runs SET status = 'failed', lease_expires_at = NULL, finished_at = $4,
			meta = meta || $5::jsonb
		WHERE id = $1 AND status = ANY($2) AND lease_token = $3 RETURNING ` + runColumns,
		args:   []any{l.RunID, fromStatuses(db.OpFail), l.Token, now, []byte(mustJSON(db.Meta{LastError: &e}))},
		events: func(r db.Run) []db.Event { return []db.Event{event(r, db.EventRunFailed, e.Node, now, e)} },
	})
}

// ReleaseRun hands a running run back to the queue. Its queued_at is kept, so it is claimed next.
func (s *Store) ReleaseRun(ctx context.Context, l db.Lease) (db.Run, error) {
	now := s.now()
	return s.transition(ctx, cas{
		op: db.OpRelease, runID: l.RunID, lease: &l,
		query: `UPDATE runs SET status = 'queued', lease_owner = '', lease_token = '', lease_expires_at = NULL
		WHERE id = $1 AND status = ANY($2) AND lease_token = $3 RETURNING ` + runColumns,
		args: []any{l.RunID, fromStatuses(db.OpRelease), l.Token},
		events: func(r db.Run) []db.Event {
			return []db.Event{event(r, db.EventRunReleased, "", now, db.RunReleasedData{Owner: l.Owner})}
		},
	})
}

// CancelRun abandons a queued, running, paused or failed run. A worker still running it loses its
// lease with this write and stops at its next one; a gate it waited at is no longer open.
func (s *Store) CancelRun(ctx context.Context, runID, by, reason string) (db.Run, error) {
	now := s.now()
	return s.transition(ctx, cas{
		op: db.OpCancel, runID: runID,
		query: `UPDATE runs SET ` + cancelSet + ` WHERE id = $1 AND status = ANY($2) RETURNING ` + runColumns,
		args:  []any{runID, fromStatuses(db.OpCancel), now},
		events: func(r db.Run) []db.Event {
			return []db.Event{event(r, db.EventRunCancelled, "", now, db.CancelData{By: by, Reason: reason})}
		},
	})
}
