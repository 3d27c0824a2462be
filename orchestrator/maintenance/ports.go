package maintenance

import (
	"context"
	"time"

	"threadflow/db"
)

// Store is what the background loops need from a run store: rescuing expired leases, firing gate
// timers, and the terminals' attachments and replicas' homes that decide who executes what.
type Store interface {
	db.Outbox
	GetRun(ctx context.Context, runID string) (db.Run, error)
	SetRunConversation(ctx context.Context, runID, conversationID string) error // a child joins its parent's thread (courier.go)
	MessageRefs(ctx context.Context, runID string) ([]db.MessageRef, error)
	AnnounceHome(ctx context.Context, h db.Home, ttl time.Duration) error
	LiveHomes(ctx context.Context) ([]db.Home, error)
	FireGateTimers(ctx context.Context, reach db.Reach, owe func(db.GateTimer) []db.Owed) ([]db.GateTimer, error)
	NextGateTimer(ctx context.Context, reach db.Reach) (time.Time, bool, error)
	AttachTerminal(ctx context.Context, conversationID, owner string, ttl time.Duration) error
	DetachTerminal(ctx context.Context, owner string) error
	RescueExpired(ctx context.Context, maxRecoveries int) ([]db.Rescue, error)
	NextLeaseExpiry(ctx context.Context) (time.Time, bool, error)
	PruneStore
}
