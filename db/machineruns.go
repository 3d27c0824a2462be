package db

import (
	"context"
	"errors"
	"fmt"
)

// CreateRun inserts a queued run with its workflow source frozen, and its run_created event, in one
// transaction with the conversation and messages it brings along. The run's conversation must exist
// or come with it (an unknown one is ErrNotFound).
func (m *Machine) CreateRun(ctx context.Context, n NewRun) (Run, error) {
	if n.Workflow == "" || n.ConversationID == "" {
		return Run{}, errors.New("create run: a run needs a workflow name and a conversation")
	}
	if n.ID == "" {
		n.ID = NewRunID()
	}
	if n.WorkflowSource == nil {
		n.WorkflowSource = []byte{} // the column is NOT NULL; an empty source is still a source
	}
	conv, err := n.CheckedConversation()
	if err != nil {
		return Run{}, err
	}
	now := m.Now()
	var out Run
	err = m.Driver.InTx(ctx, func(tx DriverTx) error {
		if conv != nil {
			if err := tx.InsertConversation(ctx, *conv, now); err != nil {
				return err
			}
		}
		r, err := tx.InsertRun(ctx, n, Digest(n.WorkflowSource), now)
		if err != nil {
			return err
		}
		out = r
		data := MustJSON(RunCreatedData{User: n.UserID, Workflow: n.Workflow})
		if _, err = tx.AppendEvent(ctx, Event{RunID: r.ID, Type: EventRunCreated, Data: data, At: now}); err != nil {
			return err
		}
		for _, msg := range n.Messages {
			msg.RunID = r.ID
			if err := tx.SetMessageRef(ctx, msg); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return Run{}, fmt.Errorf("create run %s in conversation %s: %w", n.ID, n.ConversationID, err)
	}
	return out, nil
}
