package db

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
)

// FireTrigger records one fire of a trigger and, as f.Overlap allows, creates its run, in one
// transaction under the trigger's lock (its row of triggers): whichever replica gets there first
// records the fire, and a second call with the same key (another replica's scheduler, a redelivered
// webhook) finds that record and writes nothing. The fire is started (with its run), skipped (no
// run: f.Skip, or overlap: skip while a run of an earlier fire has not ended), or waiting
// (overlap: queue; StartWaitingFire starts it once the earlier run ends, and one waits at most).
//
// Overlap is decided first; a run it lets start joins its concurrency group (f.Run.Group) exactly
// as a typed command's run does, in the same transaction: it holds the group or waits in line
// (started; Place says where, and its thread is told), or, with when_busy refuse, the run is rolled
// back to a savepoint and the fire is recorded as refused, naming the holder.
func (m *Machine) FireTrigger(ctx context.Context, f Fire) (FireResult, error) {
	if f.Trigger == "" || f.Key == "" || f.Kind == "" {
		return FireResult{}, errors.New("fire trigger: a fire needs its trigger, key and kind")
	}
	if len(f.Payload) > MaxPayloadBytes {
		return FireResult{}, fmt.Errorf("fire trigger %s: payload is %d bytes, over %d", f.Trigger, len(f.Payload), MaxPayloadBytes)
	}
	now := m.Now()
	var res FireResult
	err := m.Driver.InTx(ctx, func(tx DriverTx) error {
		res = FireResult{}
		if _, err := m.lockTrigger(ctx, tx, f.Trigger, now); err != nil {
			return err
		}
		q, args := m.Driver.Dialect().findFireSQL(f.Trigger, f.Key)
		old, err := queryFire(ctx, tx, q, args)
		if err == nil {
			res.Fire = old
			return nil
		}
		if !errors.Is(err, ErrNotFound) {
			return err
		}
		fire := TriggerFire{Trigger: f.Trigger, Key: f.Key, Kind: f.Kind, Event: f.Event, ScheduledAt: f.ScheduledAt, FiredAt: now}
		if fire.Outcome, fire.Reason, err = m.decideFire(ctx, tx, f); err != nil {
			return err
		}
		if fire.Outcome == FireStarted {
			var busy *GroupBusyError
			res.Run, res.Place, err = m.insertTriggered(ctx, tx, f.Run, now)
			switch {
			case errors.As(err, &busy):
				fire.Outcome, fire.Reason, fire.Holder, fire.Group = FireRefused, ReasonGroupBusy, busy.Holder, busy.Group
			case err != nil:
				return err
			default:
				fire.RunID = res.Run.ID
			}
		}
		q, args = m.Driver.Dialect().insertFireSQL(fire, f.Payload)
		if _, err := tx.Exec(ctx, q, args); err != nil {
			return err
		}
		res.Fire, res.Created = fire, true
		return nil
	})
	if err != nil {
		return FireResult{}, fmt.Errorf("fire trigger %s (%s): %w", f.Trigger, f.Key, err)
	}
	return res, nil
}

// decideFire is what overlap makes of a fire, read under the trigger's lock.
func (m *Machine) decideFire(ctx context.Context, tx DriverTx, f Fire) (FireOutcome, string, error) {
	if f.Skip != "" {
		return FireSkipped, f.Skip, nil
	}
	if f.Overlap == OverlapAllow || f.Overlap == "" {
		return FireStarted, "", nil
	}
	active, waiting, err := m.activeRuns(ctx, tx, f.Trigger)
	switch {
	case err != nil:
		return "", "", err
	case f.Overlap == OverlapQueue && waiting:
		return FireSkipped, ReasonAlreadyWaiting, nil
	case !active:
		return FireStarted, "", nil
	case f.Overlap == OverlapQueue:
		return FireWaiting, "", nil
	}
	return FireSkipped, ReasonOverlap, nil
}

// StartWaitingFire starts the run of the trigger's oldest waiting fire (overlap: queue) once no
// run of its earlier fires is active, in one transaction under the trigger's lock; ok is false
// when no fire waits or the earlier run has not ended. The run joins its concurrency group as
// FireTrigger's does: a refusal records the waiting fire as refused (ok, with no run).
func (m *Machine) StartWaitingFire(ctx context.Context, trigger string, run NewRun) (res FireResult, ok bool, err error) {
	now := m.Now()
	err = m.Driver.InTx(ctx, func(tx DriverTx) error {
		res, ok = FireResult{}, false
		if _, err := m.lockTrigger(ctx, tx, trigger, now); err != nil {
			return err
		}
		var key string
		q, args := m.Driver.Dialect().oldestWaitingSQL(trigger)
		if err := tx.QueryRow(ctx, q, args, &key); errors.Is(err, ErrNotFound) {
			return nil
		} else if err != nil {
			return err
		}
		if active, _, err := m.activeRuns(ctx, tx, trigger); err != nil || active {
			return err
		}
		r, place, err := m.insertTriggered(ctx, tx, run, now)
		var busy *GroupBusyError
		switch {
		case errors.As(err, &busy):
			q, args = m.Driver.Dialect().refuseWaitingSQL(TriggerFire{Trigger: trigger, Key: key, Outcome: FireRefused, Holder: busy.Holder, Group: busy.Group})
		case err != nil:
			return err
		default:
			q, args = m.Driver.Dialect().startWaitingSQL(trigger, key, r.ID)
		}
		if _, err := tx.Exec(ctx, q, args); err != nil {
			return err
		}
		q, args = m.Driver.Dialect().findFireSQL(trigger, key)
		if res.Fire, err = queryFire(ctx, tx, q, args); err != nil {
			return err
		}
		res.Run, res.Place, res.Created, ok = r, place, true, true
		return nil
	})
	if err != nil {
		return FireResult{}, false, fmt.Errorf("start waiting fire of %s: %w", trigger, err)
	}
	return res, ok, nil
}

// triggeredSavepoint marks, in a fire's transaction, the point before its run was written: a run
// its concurrency group refuses is rolled back to it, and the fire is recorded after all.
const triggeredSavepoint = "triggered_run"

// insertTriggered writes the run of a fire in tx, as CreateRun would alone: a run of a concurrency
// group joins it (insertGrouped, as every run of a group does), and one the group refuses (a
// *GroupBusyError) is rolled back to a savepoint, leaving tx as it was and usable.
func (m *Machine) insertTriggered(ctx context.Context, tx DriverTx, n NewRun, now time.Time) (Run, GroupPlace, error) {
	c, err := m.creation(n, now)
	if err != nil {
		return Run{}, GroupPlace{}, err
	}
	if n.Group == "" {
		r, err := tx.InsertRun(ctx, c)
		return r, GroupPlace{}, err
	}
	if _, err := tx.Exec(ctx, "SAVEPOINT "+triggeredSavepoint, nil); err != nil {
		return Run{}, GroupPlace{}, err
	}
	r, p, err := m.insertGrouped(ctx, tx, c)
	var busy *GroupBusyError
	if errors.As(err, &busy) {
		if _, rerr := tx.Exec(ctx, "ROLLBACK TO SAVEPOINT "+triggeredSavepoint, nil); rerr != nil {
			return Run{}, GroupPlace{}, rerr
		}
	}
	if err != nil {
		return Run{}, GroupPlace{}, err
	}
	if _, err := tx.Exec(ctx, "RELEASE SAVEPOINT "+triggeredSavepoint, nil); err != nil {
		return Run{}, GroupPlace{}, err
	}
	return r, p, nil
}

func (m *Machine) lockTrigger(ctx context.Context, tx DriverTx, trigger string, now time.Time) (time.Time, error) {
	var since int64
	q, args := m.Driver.Dialect().lockTriggerSQL(trigger, now)
	if err := tx.QueryRow(ctx, q, args, &since); err != nil {
		return time.Time{}, err
	}
	return time.UnixMicro(since).UTC(), nil
}

func (m *Machine) activeRuns(ctx context.Context, tx DriverTx, trigger string) (active, waiting bool, err error) {
	var a, w int64
	q, args := m.Driver.Dialect().activeRunsSQL(trigger)
	err = tx.QueryRow(ctx, q, args, &a, &w)
	return a > 0, w > 0, err
}

func queryFire(ctx context.Context, tx Querier, q string, args []any) (TriggerFire, error) {
	var (
		f     TriggerFire
		found bool
	)
	err := tx.Query(ctx, q, args, func(scan func(...any) error) (err error) {
		found = true
		f, err = scanFire(scan)
		return err
	})
	if err == nil && !found {
		err = ErrNotFound
	}
	return f, err
}

// TriggerStates lists every trigger a fire or a scheduler recorded, with what a scheduler needs.
func (m *Machine) TriggerStates(ctx context.Context) (map[string]TriggerState, error) {
	out := map[string]TriggerState{}
	err := m.Driver.Query(ctx, m.Driver.Dialect().triggerStatesSQL(), nil, func(scan func(...any) error) error {
		var (
			s       TriggerState
			since   int64
			last    *int64
			waiting int64
		)
		if err := scan(&s.Trigger, &since, &last, &waiting); err != nil {
			return err
		}
		s.Since, s.Waiting = time.UnixMicro(since).UTC(), waiting > 0
		if last != nil {
			s.LastScheduled = time.UnixMicro(*last).UTC()
		}
		out[s.Trigger] = s
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read triggers: %w", err)
	}
	return out, nil
}

// TriggerFires lists the trigger's newest fires (at most limit, DefaultListLimit when 0), with
// their runs' statuses.
func (m *Machine) TriggerFires(ctx context.Context, trigger string, limit int) ([]TriggerFire, error) {
	if limit <= 0 {
		limit = DefaultListLimit
	}
	var out []TriggerFire
	q, args := m.Driver.Dialect().listFiresSQL(trigger, limit)
	err := m.Driver.Query(ctx, q, args, func(scan func(...any) error) error {
		f, err := scanFire(scan)
		out = append(out, f)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list fires of %s: %w", trigger, err)
	}
	return out, nil
}

// FirePayload is the payload of the delivery that started the run; found is false for a run no
// delivery started.
func (m *Machine) FirePayload(ctx context.Context, runID string) (payload []byte, found bool, err error) {
	q, args := m.Driver.Dialect().firePayloadSQL(runID)
	err = m.Driver.ReadRow(ctx, q, args, &payload)
	if errors.Is(err, ErrNotFound) {
		err = nil
	}
	found = err == nil && payload != nil
	if err != nil {
		return nil, false, fmt.Errorf("read the payload of run %s: %w", runID, err)
	}
	return payload, found, nil
}

// NoteTriggers records triggers not recorded yet (since = now), so a new schedule counts the times
// it missed only from when it was first seen.
func (m *Machine) NoteTriggers(ctx context.Context, triggers []string) error {
	now := m.Now()
	triggers = slices.Sorted(slices.Values(triggers)) // one order of locks for every replica
	err := m.Driver.InTx(ctx, func(tx DriverTx) error {
		for _, id := range triggers {
			if _, err := m.lockTrigger(ctx, tx, id, now); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("record triggers: %w", err)
	}
	return nil
}
