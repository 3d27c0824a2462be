package orchestrator

import (
	"context"

	"threadflow/db"
	"threadflow/workflow"
)

// A shell node's process starts while its node_started event commits, instead of after: the
// commit (0.1-0.5 ms) and the fork (about 0.7 ms) then overlap, which is most of what a node costs
// above its process (BENCHMARKS.md, issue 18). It is safe because of two rules:
//
//   - Only while the lease is fresh (leaseClock): no other replica can have taken the run over, so
//     the node never runs beside another worker's copy of it. Otherwise the event commits first.
//   - The record decides. When it fails (lease lost, database gone, a contradicting record) the
//     process group is killed at once and the attempt ends with the record's error, exactly as
//     when the record failed before the process started.
//
// What changes is only the case of a bot that dies within that commit: its process dies with it
// (Pdeathsig), and the run is rescued with no node_started for the attempt, so the node runs again
// under the same attempt number. Every rescued run is scanned for stray processes (stopStrays),
// whether or not its events show a node running.

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

// startAttempt records node_started for v.Attempt and runs the attempt: for a shell node with a
// fresh lease both at once, otherwise one after the other. recErr is the record's error; when it
// is set the attempt did not run or was stopped, and its results mean nothing.
func (e *execution) startAttempt(ctx context.Context, n *workflow.Node, v workflow.Vars, h *nodeHistory) (out NodeOutput, pause *db.Pause, err, recErr error) {
	if n.Kind != workflow.KindBash || !leaseIsFresh(ctx) {
		if recErr = e.record(ctx, db.EventNodeStarted, n.ID, v.Attempt, db.NodeData{}); recErr != nil {
			return NodeOutput{}, nil, nil, recErr
		}
		out, pause, err = e.runKind(ctx, n, v, h)
		return out, pause, err, nil
	}
	runCtx, stop := context.WithCancelCause(ctx)
	defer stop(nil)
	recorded := make(chan error, 1)
	go func() {
		err := e.record(ctx, db.EventNodeStarted, n.ID, v.Attempt, db.NodeData{})
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
