package orchestrator

import (
	"context"

	"threadflow/db"
	"threadflow/workflow"
)

// A shell node's process starts while its node_started event commits, instead of after, and its
// dependents are scheduled while its node_completed commits: the commits (0.1-0.5 ms each) and the
// forks (about 0.7 ms) then overlap, which is most of what a node cost above its process
// (BENCHMARKS.md, issue 18). Events still commit in order (recorder), so a node's node_started
// never precedes its dependencies' node_completed, and the run's final write waits for them all.
// It is safe because of three rules:
//
//   - Only while the lease is fresh (leaseClock): no other replica can have taken the run over, so
//     the node never runs beside another worker's copy of it. Otherwise the event commits first.
//   - The record decides. When node_started fails (lease lost, database gone, a contradicting
//     record) the process group is killed at once and the attempt ends with the record's error,
//     exactly as when the record failed before the process started. When a deferred
//     node_completed fails, the scheduler handles it as it handled a failed completion before:
//     the nodes running stop, and the run pauses for recovery (or stops on a lost lease).
//   - Only a shell node starts early. Any other node (an approval posting its question, an agent)
//     records node_started first, so it waits for every earlier event, its dependencies'
//     node_completed included.
//
// What changes is only the case of a bot that dies within those commits: its processes die with
// it (Pdeathsig), and the rescued run may lack the last node_started or node_completed, so that
// node runs again (under the same attempt number), as a node whose completion was not yet
// committed always did. An attempt that is recorded as completed only ever saw recorded upstream
// outputs, since its events commit after theirs. Every rescued run is scanned for stray processes
// (stopStrays), whether or not its events show a node running.

type leaseClockKey struct{}

// withLeaseClock gives an execution a way to ask whether its lease is fresh.
func withLeaseClock(ctx context.Context, fresh func() bool) context.Context {
	return context.WithValue(ctx, leaseClockKey{}, fresh)
}

// leaseIsFresh reports what the lease clock in ctx says; without one (an execution not started by
// Workers) the lease is never presumed fresh.
func leaseIsFresh(ctx context.Context) bool {
	fresh, ok := ctx.Value(leaseClockKey{}).(func() bool)
	return ok && fresh()
}

// startsEarly reports whether node n may start before its node_started commits.
func startsEarly(ctx context.Context, n *workflow.Node) bool {
	return n.Kind == workflow.KindBash && leaseIsFresh(ctx)
}

// startAttempt records node_started for v.Attempt and runs the attempt: for a shell node with a
// fresh lease both at once, otherwise one after the other. queued, when set, is the record already
// asked for (by the scheduler, with its dependencies' node_completed). recErr is the record's
// error; when it is set the attempt did not run or was stopped, and its results mean nothing.
func (e *execution) startAttempt(ctx context.Context, n *workflow.Node, v workflow.Vars, h *nodeHistory, queued <-chan error) (out NodeOutput, pause *db.Pause, err, recErr error) {
	if queued == nil {
		if !startsEarly(ctx, n) {
			if recErr = e.record(ctx, db.EventNodeStarted, n.ID, v.Attempt, db.NodeData{}); recErr != nil {
				return NodeOutput{}, nil, nil, recErr
			}
			out, pause, err = e.runKind(ctx, n, v, h)
			return out, pause, err, nil
		}
		queued = e.recordLater(ctx, db.EventNodeStarted, n.ID, v.Attempt, db.NodeData{})
	}
	runCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	recorded := make(chan error, 1)
	go func() {
		err := <-queued
		if err != nil {
			stop(err) // kills the process group
		}
		recorded <- err
	}()
	out, pause, err = e.runKind(runCtx, n, v, h)
	if recErr = <-recorded; recErr != nil {
		return NodeOutput{}, nil, nil, recErr
	}
	return out, pause, err, nil
}
