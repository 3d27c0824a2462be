package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"threadflow/db"
)

// resumeSQL is the explicit resume. A paused run qualifies only with a recovery pause: gates are
// answered, not resumed. meta.resumed_from reads the status before the update.
const resumeSQL = `UPDATE runs SET status = 'queued', attempt = attempt + 1, pause_kind = '', pause_node = '',
	meta = (meta - 'pause') || jsonb_build_object('resumed_from', status), queued_at = $3, finished_at = NULL
WHERE id = $1 AND status = ANY($2) AND (status <> 'paused' OR pause_kind = 'recovery')
RETURNING ` + runColumns

// ResumeRun moves a failed or recovery-paused run back to the queue. It is the one place a run is
// claimed for resuming: of concurrent resumes exactly one matches the compare-and-set.
func (s *Store) ResumeRun(ctx context.Context, runID, by string) (db.Run, error) {
	now := s.now()
	r, err := s.transition(ctx, cas{
		op: db.OpResume, runID: runID,
		query: resumeSQL,
		args:  []any{runID, fromStatuses(db.OpResume), now},
		events: func(r db.Run) []db.Event {
			data := map[string]string{"by": by, "from": string(r.Meta.ResumedFrom)}
			return []db.Event{event(r, db.EventResumeRequested, "", now, data)}
		},
	})
	var te *db.TransitionError
	if errors.As(err, &te) && te.Found == db.StatusPaused {
		return r, fmt.Errorf("run %s waits at a gate; approve or reject it instead of resuming: %w", runID, err)
	}
	return r, err
}

// gateSQL answers a gate pause: set says where the run goes. The locking CTE reads the gate node
// before the update clears it, for the gate_resolved event.
func gateSQL(set string) string {
	return `WITH cur AS (SELECT id AS gate_run, pause_node AS gate_node FROM runs WHERE id = $1 FOR UPDATE)
UPDATE runs r SET ` + set + `, pause_kind = '', pause_node = '', meta = r.meta - 'pause'
FROM cur
WHERE r.id = cur.gate_run AND r.status = ANY($2) AND r.pause_kind IN ('approval', 'loop')
	AND ($3 = '' OR r.pause_node = $3)
RETURNING ` + runColumns + `, cur.gate_node`
}

var (
	approveSQL = gateSQL(`status = 'queued', queued_at = $4`)
	rejectSQL  = gateSQL(`status = 'cancelled', finished_at = $4, lease_owner = '', lease_token = '', lease_expires_at = NULL`)
)

// ResolveGate answers a paused gate once: approve and answer queue the run, reject cancels it. A
// second answer gets a *db.GateResolvedError describing the first.
func (s *Store) ResolveGate(ctx context.Context, g db.GateResolution) (db.Run, error) {
	op, query := db.OpApprove, approveSQL
	switch g.Decision {
	case db.DecisionApprove, db.DecisionAnswer:
	case db.DecisionReject:
		op, query = db.OpReject, rejectSQL
	default:
		return db.Run{}, fmt.Errorf("resolve gate of run %s: unknown decision %q (want approve, reject or answer)", g.RunID, g.Decision)
	}
	now := s.now()
	var node string
	r, err := s.transition(ctx, cas{
		op: op, runID: g.RunID,
		query: query,
		args:  []any{g.RunID, fromStatuses(op), g.Node, now},
		scan: func(row pgx.Row) (db.Run, error) {
			return scanRunAnd(row, &node)
		},
		events: func(r db.Run) []db.Event { return gateEvents(r, g, node, now) },
		failed: func(ctx context.Context, tx pgx.Tx) error { return alreadyResolved(ctx, tx, g) },
	})
	var te *db.TransitionError
	if errors.As(err, &te) && te.Found == db.StatusPaused {
		return r, notAtGate(g, err)
	}
	return r, err
}

// notAtGate explains a refused answer to a paused run: it waits at another gate, or for a resume.
func notAtGate(g db.GateResolution, err error) error {
	if g.Node == "" {
		return fmt.Errorf("run %s is paused for recovery, not at a gate; resume it instead: %w", g.RunID, err)
	}
	return fmt.Errorf("run %s is not waiting at gate %q; check its status for the gate it waits at: %w", g.RunID, g.Node, err)
}

// gateEvents is gate_resolved, and run_cancelled after a rejection.
func gateEvents(r db.Run, g db.GateResolution, node string, at time.Time) []db.Event {
	data := map[string]string{"decision": string(g.Decision), "by": g.By, "text": g.Text}
	evs := []db.Event{event(r, db.EventGateResolved, node, at, data)}
	if g.Decision == db.DecisionReject {
		evs = append(evs, event(r, db.EventRunCancelled, "", at, map[string]string{"by": g.By, "reason": g.Text}))
	}
	return evs
}

// firstAnswerSQL finds the first gate_resolved after the gate's latest gate_requested: the answer a
// late second answer lost to. An empty $2 means whichever gate the run requested last.
const firstAnswerSQL = `SELECT node_id, COALESCE(data->>'decision', ''), COALESCE(data->>'by', ''), at FROM run_events
WHERE run_id = $1 AND type = 'gate_resolved' AND ($2 = '' OR node_id = $2)
	AND seq > (SELECT COALESCE(max(seq), 0) FROM run_events
		WHERE run_id = $1 AND type = 'gate_requested' AND ($2 = '' OR node_id = $2))
ORDER BY seq LIMIT 1`

// alreadyResolved returns a *db.GateResolvedError when the gate g answers was answered already.
func alreadyResolved(ctx context.Context, tx pgx.Tx, g db.GateResolution) error {
	e := &db.GateResolvedError{RunID: g.RunID}
	err := tx.QueryRow(ctx, firstAnswerSQL, g.RunID, g.Node).Scan(&e.Node, &e.Decision, &e.By, &e.At)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil
	}
	if err != nil {
		return err
	}
	e.At = e.At.UTC()
	return e
}
