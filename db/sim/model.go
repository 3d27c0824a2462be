package sim

import (
	"fmt"
	"time"

	"threadflow/db"
)

// The simulated workflow: node a, then the approval gate g, then node b.
var nodeOrder = []string{"a", "g", "b"}

const gateNode = "g"

// workflowSource is the workflow frozen into every simulated run, so the fold's view of a run lists
// b before any event names it.
const workflowSource = `name: sim
nodes:
  - id: a
    bash: "true"
  - id: g
    depends_on: [a]
    approval: {message: go on?}
  - id: b
    depends_on: [g]
    bash: "true"
`

// lifeKey is the idempotency key of a node lifecycle event.
type lifeKey struct {
	typ     db.EventType
	node    string
	attempt int
}

// run is the model's prediction of one run: what the store must hold after every step.
type run struct {
	id         string
	status     db.Status
	token      string // the lease token the store must hold; "" when cleared
	pauseKind  db.PauseKind
	expires    time.Time // lease expiry while running
	recoveries int
	attempt    int
	gateDue    time.Time      // when the gate the run waits at times out; zero: never
	onTimeout  string         // db.TimeoutReject or db.TimeoutAbandon
	rejected   bool           // the gate was rejected, by a person or its timeout: the fold shows g rejected
	events     []db.EventType // every event the store must have appended, in order
	lifecycle  map[lifeKey]bool
}

func newRun(id string) *run {
	return &run{id: id, status: db.StatusQueued, events: []db.EventType{db.EventRunCreated}, lifecycle: map[lifeKey]bool{}}
}

// leaseWrite is the model's verdict on a write carrying l that moves running to "to" ("" for writes
// that are not transitions): ok, a replay of a committed write (ok, nothing changes), or lease lost.
func (r *run) leaseWrite(l db.Lease, to db.Status) (ok, replay bool) {
	held := l.Token != "" && r.token == l.Token
	switch {
	case held && r.status == db.StatusRunning:
		return true, false
	case held && to != "" && r.status == to:
		return true, true
	}
	return false, false
}

// move applies a successful transition to the model.
func (r *run) move(to db.Status, events ...db.EventType) {
	r.status = to
	r.events = append(r.events, events...)
	if to != db.StatusPaused {
		r.pauseKind, r.gateDue = "", time.Time{}
	}
}

// allows reports whether op may leave the model's status, with the pause-kind refinements.
func (r *run) allows(op db.Op) bool {
	switch op {
	case db.OpResume:
		return r.status == db.StatusFailed || (r.status == db.StatusPaused && r.pauseKind == db.PauseRecovery)
	case db.OpApprove, db.OpReject:
		return r.status == db.StatusPaused && r.pauseKind.IsGate()
	case db.OpCancel:
		return r.status == db.StatusQueued || r.status == db.StatusRunning || r.status == db.StatusPaused || r.status == db.StatusFailed
	}
	panic(fmt.Sprintf("sim: no model for %s", op))
}

// apply records the effect of a user-facing op the model allowed.
func (r *run) apply(op db.Op) {
	switch op {
	case db.OpResume:
		r.attempt++
		r.move(db.StatusQueued, db.EventResumeRequested)
	case db.OpApprove:
		r.move(db.StatusQueued, db.EventGateResolved)
	case db.OpReject:
		r.token, r.rejected = "", true
		r.move(db.StatusCancelled, db.EventGateResolved, db.EventRunCancelled)
	case db.OpCancel:
		r.token = ""
		r.move(db.StatusCancelled, db.EventRunCancelled)
	}
}

// worker is a lease a simulated worker holds. A crashed worker stops acting; it may come back as a
// zombie and write with its old lease, which the store must refuse once the lease moved on.
type worker struct {
	lease   db.Lease
	crashed bool
	pending *write // the write a crashed worker was about to make
}
