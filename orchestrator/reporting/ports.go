package reporting

import (
	"context"

	"threadflow/db"
)

// Store is what reporting needs from a run store: a run's conversation and events, and the
// messages recorded with it (its status message, its gate question), so any replica edits them.
type Store interface {
	// Owe records what a run owes outside a transition (progress, remarks).
	Owe(ctx context.Context, runID string, owed ...db.Owed) error
	Events(ctx context.Context, runID string) ([]db.Event, error)
	GetRun(ctx context.Context, runID string) (db.Run, error)
	SetMessageRef(ctx context.Context, ref db.MessageRef) error
	MessageRefs(ctx context.Context, runID string) ([]db.MessageRef, error)
}
