package db

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// CreateRun inserts a queued run with its workflow source frozen, and its run_created event, in one
// transaction with the conversation and messages it brings along. The run's conversation must exist
// or come with it (an unknown one is ErrNotFound).
func (m *Machine) CreateRun(ctx context.Context, n NewRun) (Run, error) {
	runs, errs := m.CreateRuns(ctx, []NewRun{n})
	return runs[0], errs[0]
}

// CreateRuns is CreateRun for each of ns, in one transaction: one commit for a burst of runs
// (orchestrator.Dispatcher groups concurrent creations). Each run is written in a savepoint of its
// own, so one refused (an unknown conversation) gets its error and the others are created. When
// the transaction itself fails, every run gets that error and none is created.
func (m *Machine) CreateRuns(ctx context.Context, ns []NewRun) ([]Run, []error) {
	runs, errs := make([]Run, len(ns)), make([]error, len(ns))
	convs, refused := make([]*Conversation, len(ns)), make([]error, len(ns))
	for i := range ns {
		convs[i], refused[i] = m.prepareRun(&ns[i])
	}
	now := m.Now()
	err := m.Driver.InTx(ctx, func(tx DriverTx) error {
		for i, n := range ns {
			if refused[i] != nil {
				continue
			}
			if len(ns) == 1 { // nothing to isolate it from: no savepoint round trips
				var err error
				runs[i], err = m.insertRun(ctx, tx, n, convs[i], now)
				return err // translated by InTx
			}
			errs[i] = tx.Isolated(ctx, func() (err error) {
				runs[i], err = m.insertRun(ctx, tx, n, convs[i], now)
				return err
			})
		}
		return nil
	})
	for i, n := range ns {
		if refused[i] != nil {
			errs[i] = fmt.Errorf("create run: %w", refused[i])
			continue
		}
		if err != nil && errs[i] == nil {
			errs[i] = err
		}
		if errs[i] != nil {
			runs[i], errs[i] = Run{}, fmt.Errorf("create run %s in conversation %s: %w", n.ID, n.ConversationID, errs[i])
		}
	}
	return runs, errs
}

// prepareRun checks n and fills what it may leave out, and returns the conversation it brings.
func (m *Machine) prepareRun(n *NewRun) (*Conversation, error) {
	if n.Workflow == "" || n.ConversationID == "" {
		return nil, errors.New("a run needs a workflow name and a conversation")
	}
	if n.ID == "" {
		n.ID = NewRunID()
	}
	if n.WorkflowSource == nil {
		n.WorkflowSource = []byte{} // the column is NOT NULL; an empty source is still a source
	}
	return n.CheckedConversation()
}

// insertRun writes one run, its conversation, its run_created event and its message references.
func (m *Machine) insertRun(ctx context.Context, tx DriverTx, n NewRun, conv *Conversation, now time.Time) (Run, error) {
	if conv != nil {
		if err := tx.InsertConversation(ctx, *conv, now); err != nil {
			return Run{}, err
		}
	}
	r, err := tx.InsertRun(ctx, n, Digest(n.WorkflowSource), now)
	if err != nil {
		return Run{}, err
	}
	data := MustJSON(RunCreatedData{User: n.UserID, Workflow: n.Workflow})
	if _, err = tx.AppendEvent(ctx, Event{RunID: r.ID, Type: EventRunCreated, Data: data, At: now}); err != nil {
		return Run{}, err
	}
	for _, msg := range n.Messages {
		msg.RunID = r.ID
		if err := tx.SetMessageRef(ctx, msg); err != nil {
			return Run{}, err
		}
	}
	return r, nil
}

// Isolated is DriverTx.Isolated for an engine whose SQL has SAVEPOINT (both do), given a way to
// run one statement: fn runs inside a savepoint that is released when it succeeds and rolled back
// to when it fails, and fn's error is returned.
func Isolated(exec func(stmt string) error, fn func() error) error {
	if err := exec("SAVEPOINT isolated"); err != nil {
		return err
	}
	if err := fn(); err != nil {
		if rerr := exec("ROLLBACK TO SAVEPOINT isolated"); rerr != nil {
			return errors.Join(err, rerr)
		}
		return err
	}
	return exec("RELEASE SAVEPOINT isolated")
}
