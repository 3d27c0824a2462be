package execution

import (
	"context"
	"errors"
	"sync"
	"time"

	"threadflow/db"
)

// recorder writes an execution's node events in the order they were asked for, on a goroutine of
// its own, committing together whatever is waiting when it turns to them (Store.RecordEvents).
// Asking returns at once with a channel for the write's result; every event commits after the ones
// asked for before it, so a node's node_started never precedes its dependencies' node_completed.
// The scheduler asks for a node's node_completed and its dependents' node_started together
// (commitGroup), so a chain commits once per node.
type recorder struct {
	mu sync.Mutex
	// queue holds groups: a group is never split between commits, so a node_started asked for with
	// the node_completed that lets it start cannot commit when that completion fails.
	queue   chan []recordJob
	stopped bool
	done    sync.WaitGroup
}

// recordBatch is how many events a commit gathers from waiting groups before it stops taking more
// (a group is never split, so one commit can carry more).
const recordBatch = 64

type recordJob struct {
	ctx    context.Context
	event  db.Event
	result chan error
}

// newRecordJob prepares the event of p at node and attempt for recordLater or submitRecords (the
// store stamps its time).
func (e *execution) newRecordJob(ctx context.Context, node string, attempt int, p db.Payload) recordJob {
	return recordJob{ctx: ctx, event: db.NewEvent(e.run.ID, node, attempt, p, time.Time{}), result: make(chan error, 1)}
}

// recordLater asks for an event to be recorded after those asked for before it; the channel gets
// the result, as e.record returns it.
func (e *execution) recordLater(ctx context.Context, node string, attempt int, p db.Payload) <-chan error {
	job := e.newRecordJob(ctx, node, attempt, p)
	e.submitRecords([]recordJob{job})
	return job.result
}

// submitRecords queues jobs as one group, committed in one transaction (with other groups waiting
// at the same time, if any), after every group queued before it.
func (e *execution) submitRecords(jobs []recordJob) {
	if len(jobs) == 0 {
		return
	}
	r := &e.recorder
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.stopped { // only after the execution: nothing is queued any more
		e.writeRecords(jobs)
		return
	}
	if r.queue == nil {
		r.queue = make(chan []recordJob, recordBatch)
		r.done.Add(1)
		go e.recordLoop(r.queue)
	}
	r.queue <- jobs
}

// recordLoop writes what is queued, the groups waiting at once together, until stopRecorder.
func (e *execution) recordLoop(queue <-chan []recordJob) {
	defer e.recorder.done.Done()
	for group := range queue {
		jobs := group
	more:
		for len(jobs) < recordBatch {
			select {
			case next, ok := <-queue:
				if !ok {
					break more
				}
				jobs = append(jobs, next...)
			default:
				break more
			}
		}
		e.writeRecords(jobs)
	}
}

// writeRecords records jobs in one call and hands each its result.
func (e *execution) writeRecords(jobs []recordJob) {
	if len(jobs) == 0 {
		return
	}
	events := make([]db.Event, len(jobs))
	for i, job := range jobs {
		events[i] = job.event
	}
	// The first job's context: they all come from this execution, which stops them together.
	_, errs := e.x.Store.RecordEvents(jobs[0].ctx, e.lease, events)
	for i, job := range jobs {
		job.result <- e.recordOutcome(job.ctx, job.event, errs[i])
	}
}

// recordOutcome is what a failed write means to the execution: a lost lease stops it at once.
func (e *execution) recordOutcome(ctx context.Context, ev db.Event, err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, db.ErrLeaseLost):
		e.cancel(err)
		return err
	case errors.Is(err, db.ErrConflict), ctx.Err() != nil:
		return err
	}
	return &recordError{typ: ev.Type, node: ev.NodeID, err: err}
}

// stopRecorder waits for the queued writes and ends the writer; the execution is over.
func (e *execution) stopRecorder() {
	r := &e.recorder
	r.mu.Lock()
	r.stopped = true
	if r.queue != nil {
		close(r.queue)
	}
	r.mu.Unlock()
	r.done.Wait()
}
