package orchestrator

import (
	"context"
	"sync"

	"threadflow/db"
)

// recorder writes an execution's node events one at a time, in the order they were asked for,
// on a goroutine of its own. Asking returns at once with a channel for the write's result, so a
// shell node's process can run while its events commit (overlap.go), and every event still
// commits after the ones asked for before it: a node's node_started never precedes the
// node_completed of the node it depends on.
type recorder struct {
	mu      sync.Mutex
	queue   chan recordJob
	stopped bool
	done    sync.WaitGroup
}

type recordJob struct {
	ctx     context.Context
	typ     db.EventType
	node    string
	attempt int
	data    any
	result  chan error
}

// recordLater asks for an event to be recorded after those asked for before it; the channel gets
// the result, as e.record returns it.
func (e *execution) recordLater(ctx context.Context, typ db.EventType, node string, attempt int, data any) <-chan error {
	job := recordJob{ctx: ctx, typ: typ, node: node, attempt: attempt, data: data, result: make(chan error, 1)}
	r := &e.recorder
	r.mu.Lock()
	if r.stopped { // only after the execution: write at once, nothing is queued any more
		r.mu.Unlock()
		job.result <- e.recordNow(ctx, typ, node, attempt, data)
		return job.result
	}
	if r.queue == nil {
		r.queue = make(chan recordJob, 64)
		r.done.Add(1)
		go e.writeRecords(r.queue)
	}
	r.queue <- job
	r.mu.Unlock()
	return job.result
}

func (e *execution) writeRecords(queue <-chan recordJob) {
	defer e.recorder.done.Done()
	for job := range queue {
		job.result <- e.recordNow(job.ctx, job.typ, job.node, job.attempt, job.data)
	}
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
