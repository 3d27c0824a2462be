package db

import (
	"context"
	"fmt"
	"time"
)

// ChildNotes renders what a child run cancelled with its parent owes (its line in the parent's
// thread shows it cancelled), recorded in the transaction that cancels it. The reporter sets it
// (Store.SetChildNotes); without it nothing is owed.
type ChildNotes func(child Run) []Owed

// SetChildNotes sets what child runs cancelled with their parent owe (ChildNotes).
func (m *Machine) SetChildNotes(f ChildNotes) { m.childNotes.Store(&f) }

// ended is what a transition that moved run r takes with it, in the transition's transaction;
// every transition goes through it, so each rule is decided here once:
//   - a run that ended gives up its concurrency group (leaveGroup);
//   - a run that was cancelled, however it was (cancelled or abandoned by a person, rejected at a
//     gate, abandoned or rejected by a gate's timer: each records a run_cancelled event among
//     events, the transition's), cancels its open child runs at any depth with it, for the same
//     person: a cancelled parent never leaves a child running, paused or failed that nobody waits
//     for, and no cancelled run is resumed by its child's resume.
func (m *Machine) ended(ctx context.Context, tx DriverTx, r Run, events []Event, now time.Time) error {
	if _, err := leaveGroup(ctx, tx, m.groups(), r); err != nil {
		return err
	}
	if r.Status != StatusCancelled {
		return nil
	}
	for _, e := range events {
		if e.Type == EventRunCancelled && e.RunID == r.ID {
			c := Decode[CancelData](e)
			return m.cancelChildren(ctx, tx, r.ID, CancelData{By: c.By, ByName: c.ByName, Via: c.Via, Reason: "its parent run " + r.ID + " was cancelled"}, now)
		}
	}
	return nil
}

// cancelChildren cancels the open children of parentID in tx, each ending as any cancelled run
// does (ended: its group, its own children), and owing what ChildNotes says. A child that ended
// between the listing and its update (completed by its worker) is left as it ended.
func (m *Machine) cancelChildren(ctx context.Context, tx DriverTx, parentID string, data CancelData, now time.Time) error {
	ids, err := tx.OpenChildren(ctx, parentID)
	if err != nil {
		return fmt.Errorf("cancel the children of run %s: %w", parentID, err)
	}
	for _, id := range ids {
		r, ok, err := tx.UpdateRun(ctx, leave(OpCancel, id, now))
		if err != nil {
			return fmt.Errorf("cancel child run %s: %w", id, err)
		}
		if !ok {
			continue
		}
		e := NewEvent(r.ID, "", 0, data, now)
		if _, err := tx.AppendEvent(ctx, e); err != nil {
			return err
		}
		if f := m.childNotes.Load(); f != nil && *f != nil {
			if err := oweChecked(ctx, tx, r.ID, (*f)(r), now); err != nil {
				return err
			}
		}
		if err := m.ended(ctx, tx, r, []Event{e}, now); err != nil {
			return err
		}
	}
	return nil
}
