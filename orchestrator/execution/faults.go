package execution

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"threadflow/conversation"
	"threadflow/db"
)

// Faults of the disk and the database, and who owns them: a failed write of the run's record stops
// the execution and leaves the run resumable (recordFailed), or hands it to the rescuer; a node
// failing on a full disk is blamed on the disk (blameDisk). docs/state-machine.md states the rule.

// errUnrecorded marks an execution that stopped because the run's record could not be written,
// not even the pause that would have left it resumable. The worker then gives up the lease at once,
// so the rescuer (of this or a healthy replica) re-queues the run, counting it against
// MAX_RECOVERIES: a node that fills the disk is not re-run forever.
var errUnrecorded = errors.New("the run's record could not be written")

// recordFaultTimeout bounds the writes that try to leave a run resumable after its record failed.
const recordFaultTimeout = 10 * time.Second

// recordFailed handles a write of the run's record that failed (disk full, database read-only or
// gone): that node's attempt is over and unrecorded. The run is paused for recovery with a notice,
// so a person resumes it once the database accepts writes again; when even the pause cannot be
// written, the thread is told and the lease is given up (errUnrecorded).
func (e *execution) recordFailed(ctx context.Context, re *recordError) error {
	e.x.Log.Error("orchestrator.record_failed", zap.String("run_id", e.run.ID), zap.String("node", re.node),
		zap.String("event", string(re.typ)), zap.Error(re.err))
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), recordFaultTimeout)
	defer cancel()
	if errors.Is(re.err, db.ErrUnwritable) {
		e.releaseReserve() // the database may share the full disk: let it record the pause
	}
	hint := fmt.Sprintf("free disk space or fix the database (/readyz says what is wrong), then /workflow resume %s", e.run.ID)
	n := Notice{Kind: NoticePaused, Node: re.node, Nodes: e.nodeStatuses()}
	run, err := e.x.Store.PauseRun(wctx, e.lease, db.Pause{Kind: db.PauseRecovery, Node: re.node, Error: re.Error(), ResumeHint: hint, Since: e.x.now()}, e.owing(n))
	if err == nil {
		n.Run = run
		e.settled(wctx, n)
		return nil
	}
	if errors.Is(err, db.ErrLeaseLost) {
		return e.interrupted(err)
	}
	e.x.Notify.Notify(wctx, Notice{Kind: NoticeNote, Run: e.run, Node: re.node, Text: conversation.T(
		conversation.P("⚠ Run "), conversation.C(e.run.ID), conversation.P(" stopped: "), conversation.O(re.Error()),
		conversation.P("\nIt could not even be paused, so it is handed back: it continues on a replica whose database accepts writes, and counts against MAX_RECOVERIES."))})
	return e.interrupted(errors.Join(re, err))
}

// recordError is a write of the run's record that the database refused or did not answer (disk
// full, read-only, unreachable): the execution cannot go on without it, and recordFailed decides
// what becomes of the run.
type recordError struct {
	typ  db.EventType
	node string
	err  error
}

func (r *recordError) Error() string {
	return fmt.Sprintf("the database could not record %s of node %s: %v", r.typ, r.node, r.err)
}

func (r *recordError) Unwrap() error { return r.err }

// blameDisk turns a failure that happened while the disk is fuller than MIN_FREE_DISK into an
// infrastructure failure: not retried, and the run stops resumable with the reason, instead of
// re-running a node that most likely failed because it (or its output) filled the disk.
func (e *execution) blameDisk(ne *nodeError) *nodeError {
	var low *LowDiskError
	if !errors.As(e.x.Disk.Check(), &low) {
		return ne
	}
	e.releaseReserve()
	if ne.class == db.ClassInfra {
		return ne
	}
	return &nodeError{class: db.ClassInfra, msg: ne.msg + " (the disk is full: " + low.Error() + ")",
		hint: "free disk space under THREADFLOW_HOME"}
}

// releaseReserve frees the disk space the bot kept for recording that the disk is full.
func (e *execution) releaseReserve() {
	if e.x.Disk.releaseReserve() {
		e.x.Log.Warn("orchestrator.disk_reserve_released", zap.String("run_id", e.run.ID), zap.String("dir", e.x.Disk.Dir))
	}
}
