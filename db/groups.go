package db

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// What Threadflow decides about concurrency groups (workflow `concurrency`): at most one run of a
// group is active. A run takes its group, waits in line for it, or is refused, in the transaction
// that creates it; the group passes to the oldest waiter in the transaction that ends its holder
// (completed or cancelled). A holder that pauses at a gate or fails keeps the group, so nothing
// else ships while a release waits for its approval or for someone to look at its failure;
// abandoning it (a cancel) frees the group. A holder whose replica died keeps the group: its lease
// decides who runs it next, as for every run. The SQL is in sqlgroups.go.

// The answers to a busy group (NewRun.WhenBusy).
const (
	GroupQueue  = "queue"
	GroupRefuse = "refuse"
)

// ErrGroupBusy matches a *GroupBusyError.
var ErrGroupBusy = errors.New("concurrency group busy")

// GroupBusyError refuses a run whose group another run holds (WhenBusy GroupRefuse): nothing was
// written.
type GroupBusyError struct {
	Group, Holder string
}

func (e *GroupBusyError) Error() string {
	return fmt.Sprintf("concurrency group %q is held by run %s", e.Group, e.Holder)
}

func (e *GroupBusyError) Unwrap() error { return ErrGroupBusy }

// GroupPlace is where a run stands in its concurrency group.
type GroupPlace struct {
	Group  string
	Holder string // the run holding the group; the run itself when it holds it
	Place  int    // 0: it holds the group; n: the nth run in line
}

// Waiting reports whether the run waits in line.
func (p GroupPlace) Waiting() bool { return p.Place > 0 }

// GroupNotes renders what a run waiting in line for its group owes its thread: when it is created
// waiting (moved false), and each time its place changes or the group is handed to it (moved true;
// Place 0 then). The reporter sets it (Store.SetGroupNotes); without it nothing is owed.
type GroupNotes func(runID string, p GroupPlace, moved bool) []Owed

// SetGroupNotes sets what runs waiting for their group owe (GroupNotes).
func (m *Machine) SetGroupNotes(f GroupNotes) { m.notes.Store(&f) }

// groups is what the group statements of a transaction need: the engine's SQL, the notes, the time.
type groups struct {
	d     Dialect
	notes GroupNotes
	now   time.Time
}

func (m *Machine) groups() groups {
	g := groups{d: m.Driver.Dialect(), now: m.Now()}
	if f := m.notes.Load(); f != nil {
		g.notes = *f
	}
	return g
}

// owe records what runID owes for p, when notes are set.
func (g groups) owe(ctx context.Context, tx DriverTx, runID string, p GroupPlace, moved bool) error {
	if g.notes == nil {
		return nil
	}
	return owes(ctx, tx, runID, g.notes(runID, p, moved), g.now)
}

// maxGroupTries bounds how often a creation retries taking a group that was handed over between
// its attempt to take it and its look at who holds it: each retry means another run ended.
const maxGroupTries = 8

// createGrouped writes a creation whose run joins a concurrency group, in a transaction of its own:
// the run, then its place in the group, and what it owes while it waits. A refused run is rolled
// back: nothing of it is written.
func (m *Machine) createGrouped(ctx context.Context, c RunCreation) (Run, error) {
	var out Run
	err := m.Driver.InTx(ctx, func(tx DriverTx) error {
		r, _, err := m.insertGrouped(ctx, tx, c)
		out = r
		return err
	})
	return out, err
}

// insertGrouped writes c's run in tx and its place in its concurrency group, and what it owes while
// it waits in line: the one way a run joins a group, whoever starts it (a person, a trigger's
// fire). A refusal (*GroupBusyError) leaves the run written in tx: the caller rolls it back (the
// whole transaction, or a savepoint).
func (m *Machine) insertGrouped(ctx context.Context, tx DriverTx, c RunCreation) (Run, GroupPlace, error) {
	r, err := tx.InsertRun(ctx, c)
	if err != nil {
		return Run{}, GroupPlace{}, err
	}
	g := m.groups()
	p, err := joinGroup(ctx, tx, g.d, c.Run, c.At)
	if err != nil {
		return Run{}, GroupPlace{}, err
	}
	if p.Waiting() {
		if err := g.owe(ctx, tx, r.ID, p, false); err != nil {
			return Run{}, GroupPlace{}, err
		}
	}
	return r, p, nil
}

// joinGroup takes n's group, or puts n in line, or refuses it, as n.WhenBusy says.
func joinGroup(ctx context.Context, tx DriverTx, d Dialect, n NewRun, now time.Time) (GroupPlace, error) {
	for range maxGroupTries {
		q, args := d.TakeGroup(n.Group, n.ID, now)
		took, err := tx.Exec(ctx, q, args)
		if err != nil {
			return GroupPlace{}, fmt.Errorf("take concurrency group %q: %w", n.Group, err)
		}
		if took == 1 {
			return GroupPlace{Group: n.Group, Holder: n.ID}, nil
		}
		var holder string
		q, args = d.GroupHolder(n.Group)
		err = tx.QueryRow(ctx, q, args, &holder)
		if errors.Is(err, ErrNotFound) {
			continue // handed over and ended since: try again
		}
		if err != nil {
			return GroupPlace{}, fmt.Errorf("read the holder of concurrency group %q: %w", n.Group, err)
		}
		if n.WhenBusy == GroupRefuse {
			return GroupPlace{}, &GroupBusyError{Group: n.Group, Holder: holder}
		}
		q, args = d.WaitGroup(n.Group, n.ID, now)
		if _, err := tx.Exec(ctx, q, args); err != nil {
			return GroupPlace{}, fmt.Errorf("wait for concurrency group %q: %w", n.Group, err)
		}
		return placeIn(ctx, tx, d, n.ID)
	}
	return GroupPlace{}, fmt.Errorf("concurrency group %q changed hands %d times while run %s joined it; try again", n.Group, maxGroupTries, n.ID)
}

func placeIn(ctx context.Context, tx DriverTx, d Dialect, runID string) (GroupPlace, error) {
	var (
		p       GroupPlace
		holding bool
	)
	q, args := d.GroupPlace(runID)
	err := tx.QueryRow(ctx, q, args, &p.Group, &holding, &p.Holder, &p.Place)
	return p, err
}

// leaveGroup gives up r's place in its group once r ended (completed or cancelled) and hands the
// group to the oldest waiter when r held it; every run behind it in line is told its new place
// (GroupNotes). It returns the run the group was handed to ("" for none).
func leaveGroup(ctx context.Context, tx DriverTx, g groups, r Run) (string, error) {
	d := g.d
	if r.Group == "" || !r.Status.Terminal() {
		return "", nil
	}
	var (
		group   string
		holding bool
	)
	q, args := d.LeaveGroup(r.ID)
	err := tx.QueryRow(ctx, q, args, &group, &holding)
	if errors.Is(err, ErrNotFound) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("leave concurrency group of run %s: %w", r.ID, err)
	}
	next := ""
	if holding {
		q, args = d.PromoteGroup(group)
		err = tx.QueryRow(ctx, q, args, &next)
		if err != nil && !errors.Is(err, ErrNotFound) {
			return "", fmt.Errorf("hand concurrency group %q on: %w", group, err)
		}
	}
	return next, g.moved(ctx, tx, group, next)
}

// moved tells the runs of group whose place changed: the new holder (next, "" for none) and every
// run still in line.
func (g groups) moved(ctx context.Context, tx DriverTx, group, next string) error {
	if g.notes == nil {
		return nil
	}
	holder := next
	if next != "" {
		if err := g.owe(ctx, tx, next, GroupPlace{Group: group, Holder: next}, true); err != nil {
			return err
		}
	} else {
		q, args := g.d.GroupHolder(group)
		if err := tx.QueryRow(ctx, q, args, &holder); err != nil && !errors.Is(err, ErrNotFound) {
			return fmt.Errorf("read the holder of concurrency group %q: %w", group, err)
		}
	}
	q, args := g.d.GroupWaiters(group)
	var line []string
	if err := tx.QueryStrings(ctx, q, args, &line); err != nil {
		return fmt.Errorf("read the line of concurrency group %q: %w", group, err)
	}
	for i, id := range line {
		if err := g.owe(ctx, tx, id, GroupPlace{Group: group, Holder: holder, Place: i + 1}, true); err != nil {
			return err
		}
	}
	return nil
}

// GroupPlace says where a run stands in its concurrency group; ErrNotFound when it holds no place
// (no group, or it ended).
func (m *Machine) GroupPlace(ctx context.Context, runID string) (GroupPlace, error) {
	var (
		p       GroupPlace
		holding bool
	)
	q, args := m.Driver.Dialect().GroupPlace(runID)
	err := m.Driver.ReadRow(ctx, q, args, &p.Group, &holding, &p.Holder, &p.Place)
	return p, err
}

// GroupWaiters lists the runs waiting for group, in line order.
func (m *Machine) GroupWaiters(ctx context.Context, group string) ([]string, error) {
	q, args := m.Driver.Dialect().GroupWaiters(group)
	return m.Driver.ReadStrings(ctx, q, args)
}

// EncodeInputs is how a run's inputs are stored: a JSON object, ” for none.
func EncodeInputs(in map[string]string) string {
	if len(in) == 0 {
		return ""
	}
	b, err := json.Marshal(in)
	if err != nil {
		panic("db: encode inputs: " + err.Error()) // a map of strings always encodes
	}
	return string(b)
}

// DecodeInputs reads stored inputs.
func DecodeInputs(runID, s string) (map[string]string, error) {
	if s == "" {
		return nil, nil
	}
	var in map[string]string
	if err := json.Unmarshal([]byte(s), &in); err != nil {
		return nil, fmt.Errorf("run %s: stored inputs are not valid: %w", runID, err)
	}
	return in, nil
}
