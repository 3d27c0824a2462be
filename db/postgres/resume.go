package postgres

import (
	"context"
	"errors"
	"fmt"

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
			data := db.ResumeRequestedData{By: by, From: r.Meta.ResumedFrom}
			return []db.Event{event(r, db.EventResumeRequested, "", now, data)}
		},
	})
	var te *db.TransitionError
	if errors.As(err, &te) && te.Found == db.StatusPaused {
		return r, fmt.Errorf("run %s waits at a gate; approve or reject it instead of resuming: %w", runID, err)
	}
	return r, err
}
