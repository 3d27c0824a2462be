package sim

import (
	"encoding/json"
	"fmt"
	"time"

	"threadflow/db"
)

// writeKind is one write a worker makes under its lease.
type writeKind string

const (
	wStart    writeKind = "node_started"
	wDone     writeKind = "node_completed"
	wNodeFail writeKind = "node_failed"
	wGate     writeKind = "pause at gate"
	wRecovery writeKind = "pause for recovery"
	wComplete writeKind = "complete"
	wFail     writeKind = "fail"
	wRelease  writeKind = "release"
)

// write is what a worker is about to write; a crashed worker keeps it for when it comes back.
type write struct {
	kind    writeKind
	node    string
	attempt int
	// A gate pause may time out: at due, rejecting the gate or abandoning the run (onTimeout).
	due       time.Time
	onTimeout string
}

func (w write) String() string { return fmt.Sprintf("%s %s#%d", w.kind, w.node, w.attempt) }

// act lets a live worker (or, with zombie, a crashed one) make its next write.
func (s *Sim) act(zombie bool) error {
	w := s.pickWorker(zombie)
	if w == nil {
		return nil
	}
	if zombie {
		wr := *w.pending
		w.crashed, w.pending = false, nil
		return s.perform(w, wr)
	}
	wr, err := s.plan(w)
	if err != nil {
		return err
	}
	return s.perform(w, wr)
}

// plan is what the worker does next, decided like the executor does: from the run's events, at the
// first node without node_completed.
func (s *Sim) plan(w *worker) (write, error) {
	evs, err := s.store.Events(s.ctx, w.lease.RunID)
	if err != nil {
		return write{}, err
	}
	attempt := s.byID[w.lease.RunID].attempt
	node := nextNode(evs)
	switch {
	case node == "":
		return write{kind: wComplete}, nil
	case node == gateNode && gateApproved(evs):
		return write{kind: wDone, node: node, attempt: attempt}, nil
	case node == gateNode:
		wr := write{kind: wGate, node: node, attempt: attempt}
		if s.rng.IntN(2) == 0 {
			wr.due = s.clock.Now().Add(time.Duration(1+s.rng.IntN(4)) * ttl / 2)
			wr.onTimeout = []string{db.TimeoutReject, db.TimeoutAbandon}[s.rng.IntN(2)]
		}
		return wr, nil
	case !recorded(evs, db.EventNodeStarted, node, attempt):
		return write{kind: wStart, node: node, attempt: attempt}, nil
	case recorded(evs, db.EventNodeFailed, node, attempt):
		return write{kind: wFail, node: node, attempt: attempt}, nil
	}
	switch n := s.rng.IntN(10); {
	case n == 0:
		return write{kind: wNodeFail, node: node, attempt: attempt}, nil
	case n == 1:
		return write{kind: wRecovery, node: node, attempt: attempt}, nil
	}
	return write{kind: wDone, node: node, attempt: attempt}, nil
}

func nextNode(evs []db.Event) string {
	for _, n := range nodeOrder {
		if !recorded(evs, db.EventNodeCompleted, n, -1) {
			return n
		}
	}
	return ""
}

// recorded reports whether evs hold typ for node (and attempt, unless it is -1).
func recorded(evs []db.Event, typ db.EventType, node string, attempt int) bool {
	for _, e := range evs {
		if e.Type == typ && e.NodeID == node && (attempt < 0 || e.Attempt == attempt) {
			return true
		}
	}
	return false
}

// gateApproved reports whether the gate's latest question was answered with approve.
func gateApproved(evs []db.Event) bool {
	approved := false
	for _, e := range evs {
		switch {
		case e.Type == db.EventGateRequested && e.NodeID == gateNode:
			approved = false
		case e.Type == db.EventGateResolved && e.NodeID == gateNode:
			var d db.GateAnswerData
			approved = json.Unmarshal(e.Data, &d) == nil && d.Decision == db.DecisionApprove
		}
	}
	return approved
}

// perform makes the write and checks the store's answer against the model.
func (s *Sim) perform(w *worker, wr write) error {
	r := s.byID[w.lease.RunID]
	s.note("%s writes %s on %s (run is %s)", w.lease.Owner, wr, r.id, r.status)
	s.touch(r)
	switch wr.kind {
	case wStart, wDone, wNodeFail:
		return s.recordNode(w, r, wr)
	}
	to, evs, err := s.leaseTransition(w.lease, wr)
	ok, replay := r.leaseWrite(w.lease, to)
	if err := want(err, ok, db.ErrLeaseLost, string(wr.kind)+" "+r.id); err != nil {
		return err
	}
	s.count(ok, replay, string(wr.kind))
	if ok && !replay {
		r.move(to, evs...)
		if wr.kind == wRecovery || wr.kind == wGate {
			r.pauseKind = pauseKind(wr.kind)
		}
		if wr.kind == wGate {
			r.gateDue, r.onTimeout = wr.due, wr.onTimeout
		}
		if to == db.StatusQueued {
			r.token = ""
		}
	}
	if ok && s.rng.IntN(8) == 0 {
		// The reply was lost and the worker retries: a committed lease write replays as a no-op.
		s.note("%s retries %s on %s", w.lease.Owner, wr, r.id)
		_, _, err := s.leaseTransition(w.lease, wr)
		ok, replay := r.leaseWrite(w.lease, to)
		s.count(ok, replay, string(wr.kind))
		if err := want(err, ok, db.ErrLeaseLost, "retried "+string(wr.kind)+" "+r.id); err != nil {
			return err
		}
	}
	s.drop(w) // the run left running, or the lease is gone
	return nil
}

// gatePause is the pause of a gate write, with its timeout when it has one.
func (s *Sim) gatePause(wr write) db.Pause {
	return db.Pause{Kind: db.PauseApproval, Node: wr.node, Message: "go on?", Since: s.clock.Now(), DueAt: wr.due, OnTimeout: wr.onTimeout}
}

func pauseKind(k writeKind) db.PauseKind {
	if k == wGate {
		return db.PauseApproval
	}
	return db.PauseRecovery
}

// leaseTransition makes a write that moves the run out of running; it returns where the model
// expects it to lead and the events it appends.
func (s *Sim) leaseTransition(l db.Lease, wr write) (db.Status, []db.EventType, error) {
	var err error
	switch wr.kind {
	case wGate:
		_, err = s.store.PauseRun(s.ctx, l, s.gatePause(wr))
		return db.StatusPaused, []db.EventType{db.EventGateRequested}, err
	case wRecovery:
		_, err = s.store.PauseRun(s.ctx, l, db.Pause{Kind: db.PauseRecovery, Node: wr.node, Error: "provider missing", ResumeHint: "install it"})
		return db.StatusPaused, []db.EventType{db.EventRunPaused}, err
	case wComplete:
		_, err = s.store.CompleteRun(s.ctx, l, "done")
		return db.StatusCompleted, []db.EventType{db.EventRunCompleted}, err
	case wFail:
		_, err = s.store.FailRun(s.ctx, l, db.RunError{Node: wr.node, Class: db.ClassPermanent, Message: "node failed"})
		return db.StatusFailed, []db.EventType{db.EventRunFailed}, err
	case wRelease:
		_, err = s.store.ReleaseRun(s.ctx, l)
		return db.StatusQueued, []db.EventType{db.EventRunReleased}, err
	}
	panic("sim: unknown write " + string(wr.kind))
}

// recordNode records a node lifecycle event: appended once, a no-op when replayed.
func (s *Sim) recordNode(w *worker, r *run, wr write) error {
	typ := db.EventType(wr.kind)
	_, err := s.store.RecordEvent(s.ctx, w.lease, db.Event{Type: typ, NodeID: wr.node, Attempt: wr.attempt})
	ok, _ := r.leaseWrite(w.lease, "")
	if err := want(err, ok, db.ErrLeaseLost, fmt.Sprintf("record %s on %s", wr, r.id)); err != nil {
		return err
	}
	s.count(ok, false, string(wr.kind))
	if !ok {
		s.drop(w)
		return nil
	}
	key := lifeKey{typ: typ, node: wr.node, attempt: wr.attempt}
	if !r.lifecycle[key] {
		r.lifecycle[key] = true
		r.events = append(r.events, typ)
		if typ == db.EventNodeCompleted {
			r.recoveries = 0
		}
	}
	return nil
}
