package sim

import (
	"fmt"
	"slices"

	"threadflow/db"
	"threadflow/orchestrator/execution"
	"threadflow/workflow"
)

// check compares the store's run and events with the model and checks the invariants that a
// single run's history can show.
func (s *Sim) check(r *run) error {
	got, err := s.store.GetRun(s.ctx, r.id)
	if err != nil {
		return fmt.Errorf("get run %s: %w", r.id, err)
	}
	switch {
	case r.status.Terminal() && got.Status != r.status:
		return fmt.Errorf("run %s left the terminal status %s: the store has it %s", r.id, r.status, got.Status)
	case got.Status != r.status:
		return fmt.Errorf("run %s is %s in the store, %s in the model", r.id, got.Status, r.status)
	case got.LeaseToken != r.token:
		return fmt.Errorf("run %s holds lease token %q in the store, %q in the model", r.id, got.LeaseToken, r.token)
	case got.Recoveries != r.recoveries || got.Attempt != r.attempt:
		return fmt.Errorf("run %s has recoveries %d, attempt %d in the store; the model has %d, %d",
			r.id, got.Recoveries, got.Attempt, r.recoveries, r.attempt)
	}
	evs, err := s.store.Events(s.ctx, r.id)
	if err != nil {
		return fmt.Errorf("events of run %s: %w", r.id, err)
	}
	if err := checkEvents(r, evs); err != nil {
		return err
	}
	return checkNodes(r, got, evs)
}

// checkNodes: what every view shows of the run's nodes (the orchestrator's fold) agrees with the
// run. A run that stopped for good, or failed, has no node running or waiting, and one that ended
// for good none pending either; the gate a person or its timeout rejected shows rejected; the gate
// of a run paused at it shows waiting.
func checkNodes(r *run, got db.Run, evs []db.Event) error {
	open := map[string]bool{string(workflow.StateRunning): true, execution.NodeWaiting: true}
	if r.status.Terminal() {
		open[string(workflow.StatePending)] = true
	}
	for _, n := range execution.RunNodes(got, evs) {
		switch {
		case (r.status.Terminal() || r.status == db.StatusFailed) && open[n.State]:
			return fmt.Errorf("run %s is %s, but its node %s is %s", r.id, r.status, n.ID, n.State)
		case n.ID == gateNode && r.rejected && n.State != execution.NodeRejected:
			return fmt.Errorf("run %s: its gate was rejected, but the gate node shows %s", r.id, n.State)
		case n.ID == gateNode && r.status == db.StatusPaused && r.pauseKind.IsGate() && n.State != execution.NodeWaiting:
			return fmt.Errorf("run %s waits at its gate, but the gate node shows %s", r.id, n.State)
		}
	}
	return nil
}

// checkEvents: sequences are 1..n without gaps, every transition appended its events exactly once
// (one winner), and no node started again after it completed.
func checkEvents(r *run, evs []db.Event) error {
	types := make([]db.EventType, len(evs))
	completed := map[string]bool{}
	for i, e := range evs {
		if e.Seq != int64(i+1) {
			return fmt.Errorf("run %s: event %d has seq %d; sequences must be 1..n without gaps", r.id, i+1, e.Seq)
		}
		if e.Type == db.EventNodeStarted && completed[e.NodeID] {
			return fmt.Errorf("run %s: node %s started again (seq %d) after it completed", r.id, e.NodeID, e.Seq)
		}
		if e.Type == db.EventNodeCompleted {
			completed[e.NodeID] = true
		}
		types[i] = e.Type
	}
	if !slices.Equal(types, r.events) {
		return fmt.Errorf("run %s has events %v in the store; the model expects %v", r.id, types, r.events)
	}
	return nil
}

// checkLeases: no run is leased by two owners. Every live worker's lease the model still counts as
// held is the run's one lease, and no two workers hold the same run's lease.
func (s *Sim) checkLeases() error {
	holder := map[string]string{}
	for _, w := range s.workers {
		r := s.byID[w.lease.RunID]
		if r.status != db.StatusRunning || r.token != w.lease.Token {
			continue
		}
		if other, ok := holder[r.id]; ok {
			return fmt.Errorf("run %s is leased by both %s and %s", r.id, other, w.lease.Owner)
		}
		holder[r.id] = w.lease.Owner
	}
	return nil
}
