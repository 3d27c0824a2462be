package execution

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"go.uber.org/zap"

	"threadflow/db"
	"threadflow/workflow"
)

// scheduler state of one execution: which nodes run now and why the run must stop.
type scheduler struct {
	running map[string]bool
	// ready are the nodes whose verdict may have changed since they were last decided: at first
	// every node, then the dependents of each node that finished or was skipped, and nodes the
	// parallel limit held back. Deciding only these keeps a completion's cost independent of the
	// workflow's size.
	ready   map[*workflow.Node]bool
	results chan nodeResult
	// group is the events to commit together (commitGroup): a node_completed and the node_started
	// of the nodes it lets start, submitted before the scheduler records anything else or waits.
	group []recordJob
	// committing are the completions whose group is being written, oldest first: groups commit in
	// the order they were submitted, so the oldest is always the next to answer.
	committing []completion
	failure    *nodeResult // first failure that fails the run (a node without continue_on_error)
	halt       bool        // nothing more may start: a failure needs a person, or a record was contradicted
	pause      *db.Pause   // first gate that wants a person
	abort      error       // interruption: lease lost, shutdown
}

// schedule starts every node as soon as its dependencies allow (no layer barriers), at most
// MaxParallel at once. A failed node does not stop the others: its dependents decide by their
// trigger rules (an `all_done` clean-up runs), and the run fails at the end (GitHub Actions'
// semantics). Launching stops once the run must pause or abort, or after a failure only a person
// can fix; nodes already running are allowed to finish so their progress is recorded.
func (e *execution) schedule(ctx context.Context) error {
	s := &scheduler{running: map[string]bool{}, ready: make(map[*workflow.Node]bool, len(e.wf.Nodes)), results: make(chan nodeResult)}
	for _, n := range e.wf.Nodes {
		s.ready[n] = true
	}
	// Nodes run under nodeCtx: once the run's record cannot be written, the other nodes stop too,
	// since nothing they do could be recorded.
	nodeCtx, stopNodes := context.WithCancelCause(ctx)
	defer stopNodes(nil)
	progressed := true // the first launch is progress too: a long first node shows as running, not queued
	for {
		if err := e.launchReady(nodeCtx, s); err != nil {
			s.stop(err)
		}
		s.submitRecords(e)
		if progressed { // while the records commit, and showing what just started
			e.showProgress(ctx)
			progressed = false
		}
		if s.unrecorded() != nil {
			stopNodes(s.abort)
		}
		if len(s.running) == 0 && len(s.committing) == 0 {
			break
		}
		switch r, c, err := e.next(ctx, s); {
		case c != nil: // a completion's group was written
			if err != nil { // refused: handled as a node whose completion could not be recorded
				r := c.result
				r.err = err
				e.handleResult(ctx, s, r)
			}
		default:
			delete(s.running, r.node.ID)
			if r.complete != nil { // committed with what this completion lets start (commitGroup)
				s.commit(e.newRecordJob(nodeCtx, r.node.ID, r.attempt, *r.complete), r)
			}
			e.handleResult(ctx, s, r)
			s.reconsider(e.affected(r.node.ID))
			progressed = true
		}
	}
	e.flushProgress(ctx)
	return e.finish(ctx, s)
}

// submitRecords hands the events gathered since the last call to the recorder, in order, to be
// committed together.
//
// commitGroup: a node's node_completed is not written by the node but by the scheduler, in one
// transaction with the node_started of every node its completion lets start. Those nodes' goroutines
// start at once but wait for that commit before anything of theirs runs, so durability is what it
// was (a dependent never runs before its upstream's completion is committed, a script never runs
// before its node_started is: startGate) with one commit per node of a chain instead of two.
func (s *scheduler) submitRecords(e *execution) {
	e.submitRecords(s.group)
	s.group = nil
}

// completion is a node's success on its way to the record: one value, made once by the scheduler
// from the node's result and handed to the recorder as the head of a commit group (the node_started
// of the nodes it lets start join it). Until the group commits the success is not final: a refused
// completion is handled as it always was (the nodes it let start never ran; they end with the same
// error), and the run's final write waits until no completion is left.
type completion struct {
	result   nodeResult
	recorded <-chan error // the group's commit
}

// commit opens a new commit group with the node_completed job of r.
func (s *scheduler) commit(job recordJob, r nodeResult) {
	s.group = append(s.group, job)
	s.committing = append(s.committing, completion{result: r, recorded: job.result})
}

// unrecorded returns the failed write that aborted the execution, if that is why it stops.
func (s *scheduler) unrecorded() *recordError {
	var re *recordError
	if errors.As(s.abort, &re) {
		return re
	}
	return nil
}

// recordFailed handles a failed write about node n: a record contradicting what is stored is a bug,
// never retried, so the run fails and says so; anything else (lease lost, database gone) interrupts
// the execution and is returned.
func (s *scheduler) recordFailed(n *workflow.Node, attempt int, err error) error {
	if !errors.Is(err, db.ErrConflict) {
		return err
	}
	if s.failure == nil {
		s.failure = &nodeResult{node: n, attempt: attempt, err: &nodeError{class: db.ClassPermanent, msg: err.Error()}}
	}
	s.halt = true
	return nil
}

func (s *scheduler) stopping() bool { return s.halt || s.pause != nil || s.abort != nil }

func (s *scheduler) stop(err error) {
	if s.abort == nil {
		s.abort = err
	}
}

// launchReady decides every undecided node whose dependencies allow it. Skips are recorded at
// once and can make further nodes decidable, so it repeats until nothing changes.
func (e *execution) launchReady(ctx context.Context, s *scheduler) error {
	for len(s.ready) > 0 && !s.stopping() {
		nodes := e.takeReady(s)
		for i, n := range nodes {
			h := e.hist[n.ID]
			if h.finishedState() || s.running[n.ID] {
				continue
			}
			verdict, reason := n.Decide(e.depStates(n))
			if verdict == workflow.Run && n.When != nil && !n.When.Eval(e.vars(n)) {
				verdict, reason = workflow.Skip, "condition `"+n.When.String()+"` is false"
			}
			switch verdict {
			case workflow.Skip:
				// Numbered like attempts: after a resume a node may be skipped again, for another reason.
				s.submitRecords(e) // what was asked for before the skip commits before it
				if err := e.record(ctx, n.ID, h.skips+1, db.NodeSkippedData{Reason: reason}); err != nil {
					s.reconsider(nodes[i+1:])
					return s.recordFailed(n, 0, err)
				}
				h.state, h.reason = workflow.StateSkipped, reason
				h.skips++
				s.reconsider(e.affected(n.ID))
			case workflow.Run:
				if len(s.running) >= e.x.maxParallel() {
					s.reconsider(nodes[i:]) // decided again when a slot frees
					return nil
				}
				s.running[n.ID] = true
				h.state, h.cachedByResume = workflow.StateRunning, false // as its node_started folds
				var started <-chan error
				if !h.justAnswered { // committed with the completion that let it start (commitGroup)
					job := e.newRecordJob(ctx, n.ID, h.starts+1, db.NodeStartedData{})
					s.group, started = append(s.group, job), job.result
				}
				go e.runNode(ctx, n, e.vars(n), *h, started, s.results)
			}
			if s.stopping() {
				s.reconsider(nodes[i+1:])
				return nil
			}
		}
	}
	return nil
}

// takeReady empties the set of nodes to decide, in workflow order, so nodes ready at once start in
// the order the file lists them.
func (e *execution) takeReady(s *scheduler) []*workflow.Node {
	nodes := make([]*workflow.Node, 0, len(s.ready))
	for n := range s.ready {
		nodes = append(nodes, n)
	}
	clear(s.ready)
	slices.SortFunc(nodes, func(a, b *workflow.Node) int { return e.graph.Order(a.ID) - e.graph.Order(b.ID) })
	return nodes
}

// reconsider marks nodes to be decided again at the next launch.
func (s *scheduler) reconsider(nodes []*workflow.Node) {
	for _, n := range nodes {
		s.ready[n] = true
	}
}

func (e *execution) depStates(n *workflow.Node) map[string]workflow.NodeState {
	deps := make(map[string]workflow.NodeState, len(n.DependsOn))
	for _, d := range n.DependsOn {
		deps[d] = e.hist[d].state
		if e.unsettled(d) { // it may run again yet (alwaysrun.go): its dependents wait
			deps[d] = workflow.StatePending
		}
	}
	return deps
}

func (e *execution) handleResult(ctx context.Context, s *scheduler, r nodeResult) {
	h := e.hist[r.node.ID]
	h.starts, h.started, h.finished, h.duration = r.attempt, r.started, r.finished, r.duration
	defer func() {
		if h.state == workflow.StateCompleted || h.state == workflow.StateFailed {
			e.x.observer().NodeFinished(e.run.Workflow, string(h.state), r.finished.Sub(r.started))
		}
	}()
	var ne *nodeError
	switch {
	case r.err == nil && r.pause != nil:
		h.state = workflow.StatePending
		if s.pause == nil {
			s.pause = r.pause
		}
	case r.err == nil:
		h.state, h.output = workflow.StateCompleted, r.output
		e.progressed = true
		e.invalidateStale(e.graph.Dependents(r.node.ID))
	case errors.As(r.err, &ne):
		h.state, h.reason = workflow.StateFailed, ne.msg
		// A missing CLI or working directory fails every node alike: nothing more starts, and the
		// run waits for a person even when the node may fail (continue_on_error).
		infra := ne.class == db.ClassInfra
		if (infra || !r.node.ContinueOnError) && s.failure == nil {
			s.failure = &r
		}
		s.halt = s.halt || infra
	case errors.Is(r.err, db.ErrConflict):
		h.state = workflow.StateFailed
		if err := s.recordFailed(r.node, r.attempt, r.err); err != nil {
			s.stop(err)
		}
	default:
		h.state = workflow.StatePending
		s.stop(r.err)
	}
}

// finish records how the run stopped.
func (e *execution) finish(ctx context.Context, s *scheduler) error {
	switch {
	case s.abort != nil:
		if cause := context.Cause(ctx); cause != nil {
			return cause
		}
		if re := s.unrecorded(); re != nil {
			return e.recordFailed(ctx, re)
		}
		return s.abort
	case s.failure != nil:
		return e.stopFailed(ctx, s.failure.node.ID, s.failure.attempt, s.failure.err)
	case s.pause != nil:
		return e.pauseAtGate(ctx, *s.pause)
	}
	for _, n := range e.wf.Nodes { // failed in an earlier execution of this round (before a rescue)
		if h := e.hist[n.ID]; h.state == workflow.StateFailed && !n.ContinueOnError {
			return e.stopFailed(ctx, n.ID, 0, &nodeError{class: db.ClassPermanent, msg: h.reason})
		}
	}
	return e.complete(ctx)
}

// complete finishes the run with the outputs of its completed sink nodes.
func (e *execution) complete(ctx context.Context) error {
	var parts []string
	for _, n := range e.wf.Nodes {
		if e.graph.IsSink(n.ID) && e.hist[n.ID].state == workflow.StateCompleted {
			out := e.hist[n.ID].output
			text := strings.TrimSpace(out.Text)
			if out.Truncated() {
				text = strings.TrimSpace(text + "\n" + truncationNote(e.run.ID, n.ID, out))
			}
			if text != "" {
				parts = append(parts, text)
			}
		}
	}
	n := Notice{Kind: NoticeCompleted, Nodes: e.nodeStatuses(), Usage: e.runUsage(ctx)}
	run, err := e.x.Store.CompleteRun(ctx, e.lease, strings.Join(parts, "\n\n"), e.owing(n))
	if err != nil {
		return e.interrupted(err)
	}
	n.Run = run
	e.settled(ctx, n)
	return nil
}

// owing is what the transition n reports owes, recorded with it (Executor.Owing).
func (e *execution) owing(n Notice) db.Owing {
	if e.x.Owing == nil {
		return nil
	}
	return e.x.Owing(n)
}

// settled tells the run's conversation how the run stopped, once that is written. The lease ended
// with the write, so the worker's next renewal finds it gone and cancels ctx; the notice is sent on
// a context free of that, bounded by NoticeGrace, or the user would never hear how the run ended.
func (e *execution) settled(ctx context.Context, n Notice) {
	e.x.observer().RunStopped(n.Run.Workflow, n.Run.Status)
	nctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), NoticeGrace)
	defer cancel()
	e.x.Notify.Notify(nctx, n)
}

// stopFailed moves the run to a resumable state after a failure at node ("" when it happened before
// any node, such as creating the working directory). An infrastructure failure before any progress
// in this execution (a provider binary missing, the working directory gone) never burns the run:
// it goes back to where it was (paused with a hint, or failed if it was failed) with the error, so
// the same /workflow resume works once the cause is fixed. Any other failure fails the run, which
// stays resumable too: failed is not terminal.
func (e *execution) stopFailed(ctx context.Context, node string, attempt int, err error) error {
	var ne *nodeError
	if !errors.As(err, &ne) {
		ne = &nodeError{class: db.ClassPermanent, msg: err.Error()}
	}
	if e.resumed && !e.progressed { // a resume attempt that failed: recorded, and the run stays resumable
		// The run still stops below; a lost record only loses this line of its resume history.
		if rerr := e.record(ctx, node, attempt, db.ResumeFailedData{Error: ne.msg, Class: ne.class}); rerr != nil {
			e.x.Log.Warn("orchestrator.resume_failed_not_recorded", zap.String("run_id", e.run.ID), zap.Error(rerr))
		}
	}
	if ne.class == db.ClassInfra && !e.progressed && !(e.resumed && e.run.Meta.ResumedFrom == db.StatusFailed) {
		hint := ne.hint
		if hint == "" {
			hint = "fix the cause"
		}
		hint += fmt.Sprintf(", then /workflow resume %s", e.run.ID)
		n := Notice{Kind: NoticePaused, Node: node, Nodes: waitingAt(e.nodeStatuses(), node), Usage: e.runUsage(ctx)}
		run, err := e.x.Store.PauseRun(ctx, e.lease, db.Pause{Kind: db.PauseRecovery, Node: node, Error: ne.msg, ResumeHint: hint, Since: e.x.now()}, e.owing(n))
		if err != nil {
			return e.interrupted(err)
		}
		n.Run = run
		e.settled(ctx, n)
		return nil
	}
	return e.fail(ctx, db.RunError{Node: node, Class: ne.class, Message: ne.msg})
}

func (e *execution) fail(ctx context.Context, runErr db.RunError) error {
	n := Notice{Kind: NoticeFailed, Node: runErr.Node, Nodes: e.nodeStatuses(), Usage: e.runUsage(ctx)}
	run, err := e.x.Store.FailRun(ctx, e.lease, runErr, e.owing(n))
	if err != nil {
		return e.interrupted(err)
	}
	n.Run = run
	e.settled(ctx, n)
	return nil
}

func (e *execution) pauseAtGate(ctx context.Context, p db.Pause) error {
	if p.Since.IsZero() { // an approval sets it with its timers, so they count from the same instant
		p.Since = e.x.now()
	}
	kind := NoticeGate
	if p.Kind == db.PauseRecovery { // a budget reached before a node's turn
		kind = NoticePaused
	}
	n := Notice{Kind: kind, Node: p.Node, Nodes: waitingAt(e.nodeStatuses(), p.Node), Usage: e.runUsage(ctx)}
	run, err := e.x.Store.PauseRun(ctx, e.lease, p, e.owing(n))
	if err == nil && (!p.DueAt.IsZero() || !p.RemindAt.IsZero() || !p.EscalateAt.IsZero()) && e.x.GateTimersChanged != nil {
		e.x.GateTimersChanged()
	}
	if err != nil {
		return e.interrupted(err)
	}
	n.Run = run
	e.settled(ctx, n)
	return nil
}

// interrupted marks a failed final write: the lease is gone, or the database failed, and then the
// worker gives the lease up (errUnrecorded) so the run is rescued without waiting for it to expire.
func (e *execution) interrupted(err error) error {
	if errors.Is(err, db.ErrLeaseLost) {
		e.cancel(err)
		return err
	}
	return fmt.Errorf("%w: %w", errUnrecorded, err)
}

func (e *execution) nodeStatuses() []NodeStatus {
	if e.wf == nil { // the frozen workflow did not parse: there are no nodes to show
		return nil
	}
	out := make([]NodeStatus, 0, len(e.wf.Nodes))
	for _, n := range e.wf.Nodes {
		h := e.hist[n.ID]
		st := NodeStatus{ID: n.ID, State: string(h.state), Attempt: h.starts}
		if h.state == workflow.StateCompleted || h.state == workflow.StateFailed {
			st.Duration = h.duration
		}
		out = append(out, st)
	}
	return out
}

// waitingAt marks the node a paused run waits at, as every other view shows it (NodeWaiting): the
// executor's own states end with the node's last record.
func waitingAt(nodes []NodeStatus, node string) []NodeStatus {
	for i := range nodes {
		if nodes[i].ID == node && nodes[i].State != string(workflow.StateCompleted) {
			nodes[i].State = NodeWaiting
		}
	}
	return nodes
}

// NoticeGrace bounds how long a notice of a store write already made may take once shutdown began.
const NoticeGrace = 10 * time.Second
