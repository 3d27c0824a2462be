package db

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// gateKinds are the pause kinds a person answers.
var gateKinds = []PauseKind{PauseApproval, PauseLoop}

// ResolveGate answers a paused approval or loop gate. It reads the gate's state with the run's row
// held, lets JudgeGate decide (who may answer, how many approvals open it, what a late answer gets)
// and applies the verdict in the same transaction; a refusal is committed and then returned.
func (m *Machine) ResolveGate(ctx context.Context, g GateResolution) (GateResult, error) {
	if err := g.Check(); err != nil {
		return GateResult{}, err
	}
	now := m.Now()
	var v GateVerdict
	err := m.Driver.InTx(ctx, func(tx DriverTx) error {
		st, err := gateState(ctx, tx, g)
		if err != nil {
			return err
		}
		v = JudgeGate(st, g, now)
		if err := m.applyVerdict(ctx, tx, st, &v, now); err != nil || v.Err != nil || g.Owe == nil {
			return err
		}
		return oweChecked(ctx, tx, g.RunID, g.Owe(v.Result), now)
	})
	if err != nil {
		return GateResult{}, err
	}
	if v.Op != "" && m.Moved != nil {
		m.Moved(v.Op, v.Result.Run)
	}
	return v.Result, v.Err
}

// gateState reads what JudgeGate needs about the gate g answers.
func gateState(ctx context.Context, tx DriverTx, g GateResolution) (GateState, error) {
	run, err := tx.LockRun(ctx, g.RunID)
	if errors.Is(err, ErrNotFound) {
		return GateState{}, &TransitionError{RunID: g.RunID, Op: OpApprove}
	}
	if err != nil {
		return GateState{}, fmt.Errorf("resolve gate of run %s: %w", g.RunID, err)
	}
	st := GateState{Run: run, Node: g.Node}
	if st.Node == "" {
		st.Node = AskedGate(run)
	}
	if st.Node == "" {
		if st.Node, _, err = tx.LastAsk(ctx, g.RunID, ""); err != nil {
			return GateState{}, fmt.Errorf("resolve gate of run %s: %w", g.RunID, err)
		}
	}
	if st.Node != "" {
		if _, st.AskSeq, err = tx.LastAsk(ctx, g.RunID, st.Node); err != nil {
			return GateState{}, fmt.Errorf("read gate %s of run %s: %w", st.Node, g.RunID, err)
		}
	}
	if st.After, err = tx.GateEvents(ctx, g.RunID, st.Node, st.AskSeq); err != nil {
		return GateState{}, fmt.Errorf("read gate %s of run %s: %w", st.Node, g.RunID, err)
	}
	if g.ReplySeq > 0 {
		e, err := tx.EventAt(ctx, g.RunID, g.ReplySeq)
		if err == nil {
			st.Reply = &e
		} else if !errors.Is(err, ErrNotFound) {
			return GateState{}, fmt.Errorf("resolve gate of run %s: %w", g.RunID, err)
		}
	}
	return st, nil
}

// applyVerdict makes the verdict's transition, a compare-and-set on the gate the state was read
// for, and appends its events; a run it ends takes with it what every end does (ended).
func (m *Machine) applyVerdict(ctx context.Context, tx DriverTx, st GateState, v *GateVerdict, now time.Time) error {
	if v.Op != "" {
		u := leave(v.Op, st.Run.ID, now)
		u.IfPaused, u.PauseNode = gateKinds, st.Node
		r, ok, err := tx.UpdateRun(ctx, u)
		if err != nil {
			return fmt.Errorf("%s run %s: %w", v.Op, st.Run.ID, err)
		}
		if !ok {
			_, _, err = ExplainMiss(ctx, tx, v.Op, st.Run.ID, "", false)
			return err
		}
		v.Result.Run = r
	}
	for i := range v.Events {
		v.Events[i].RunID, v.Events[i].At = st.Run.ID, now
		if _, err := tx.AppendEvent(ctx, v.Events[i]); err != nil {
			return err
		}
	}
	if v.Op == "" {
		return nil
	}
	return m.ended(ctx, tx, v.Result.Run, v.Events, now) // a rejection, a gate's timeout, ends the run
}

// RecordGateReply records a reply to the gate the run waits at that was neither a clear yes nor no,
// so a button can later answer the gate with its text.
func (m *Machine) RecordGateReply(ctx context.Context, runID, node string, reply GateReplyData) (Event, error) {
	now := m.Now()
	var out Event
	err := m.Driver.InTx(ctx, func(tx DriverTx) error {
		run, err := tx.LockRun(ctx, runID)
		if errors.Is(err, ErrNotFound) {
			return &TransitionError{RunID: runID, Op: OpApprove}
		}
		if err != nil {
			return fmt.Errorf("record reply to run %s: %w", runID, err)
		}
		if AskedGate(run) != node || node == "" {
			return &TransitionError{RunID: runID, Op: OpApprove, Found: run.Status}
		}
		out, err = tx.AppendEvent(ctx, NewEvent(runID, node, 0, reply, now))
		return err
	})
	return out, err
}

// FireGateTimers fires every gate timer of a run in reach that is due, each in its own transaction
// that holds the run and reads it again, so a gate answered meanwhile, or a timer another process
// fired, is left alone (JudgeTimer). What owe says a fired timer owes is recorded in its
// transaction (owe may be nil).
func (m *Machine) FireGateTimers(ctx context.Context, reach Reach, owe func(GateTimer) []Owed) ([]GateTimer, error) {
	now := m.Now()
	ids, err := m.Driver.DueGateTimers(ctx, reach, now, MaxTimerBatch)
	if err != nil {
		return nil, fmt.Errorf("find due gate timers: %w", err)
	}
	var fired []GateTimer
	for _, id := range ids {
		t, ok, err := m.fireTimer(ctx, id, now, owe)
		if err != nil {
			return fired, err
		}
		if ok {
			fired = append(fired, t)
		}
	}
	return fired, nil
}

func (m *Machine) fireTimer(ctx context.Context, id string, now time.Time, owe func(GateTimer) []Owed) (GateTimer, bool, error) {
	var out GateTimer
	fired := false
	err := m.Driver.InTx(ctx, func(tx DriverTx) error {
		run, err := tx.LockRun(ctx, id)
		if err != nil || run.Meta.Pause == nil {
			return err
		}
		_, ask, err := tx.LastAsk(ctx, id, run.Meta.Pause.Node)
		if err != nil {
			return err
		}
		v, kind, ok := JudgeTimer(run, ask, now)
		if !ok {
			return nil
		}
		if kind != TimerTimeout {
			if run, err = spendTimer(ctx, tx, run, kind); err != nil {
				return fmt.Errorf("fire %s of run %s: %w", kind, id, err)
			}
			v.Result.Run = run
		}
		st := GateState{Run: run, Node: run.Meta.Pause.Node, AskSeq: ask}
		if err := m.applyVerdict(ctx, tx, st, &v, now); err != nil {
			return err
		}
		out, fired = GateTimer{Kind: kind, Run: v.Result.Run, Pause: *run.Meta.Pause}, true
		if owe == nil {
			return nil
		}
		return oweChecked(ctx, tx, id, owe(out), now)
	})
	return out, fired, err
}

// spendTimer records that the reminder or the escalation of the gate run waits at fired, in the
// timer's transaction that holds the run: the reminder is forgotten (its column and meta.pause's
// remind_at, so no later pass finds it due again), the escalation marks the gate escalated
// (Pause.Escalated, which GateRefusal reads) and leaves no timer.
func spendTimer(ctx context.Context, tx DriverTx, run Run, kind GateTimerKind) (Run, error) {
	p := *run.Meta.Pause
	if kind == TimerReminder {
		p.RemindAt = time.Time{}
	} else {
		p.Escalated = true
	}
	u := RunUpdate{RunID: run.ID, From: []Status{StatusPaused}, IfPaused: []PauseKind{PauseApproval}, PauseNode: p.Node,
		Set: RunSet{Pause: &p, Meta: Meta{Pause: &p}}}
	r, ok, err := tx.UpdateRun(ctx, u)
	if err == nil && !ok {
		err = &TransitionError{RunID: run.ID, Op: OpApprove, Found: run.Status}
	}
	return r, err
}

// oweChecked records owed messages decided inside a transaction, refusing any the outbox could
// never deliver.
func oweChecked(ctx context.Context, tx DriverTx, runID string, owe []Owed, now time.Time) error {
	if err := CheckOwed(owe); err != nil {
		return fmt.Errorf("run %s: %w", runID, err)
	}
	return owes(ctx, tx, runID, owe, now)
}
