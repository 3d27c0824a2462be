package dispatch

import (
	"context"

	"threadflow/db"
)

// Store is what dispatch needs from a run store: creating, resuming, answering and cancelling runs
// (one compare-and-set each), finding and listing them, and the conversations' assistant sessions.
type Store interface {
	CreateRun(ctx context.Context, n db.NewRun) (db.Run, error)
	GetRun(ctx context.Context, runID string) (db.Run, error)
	ResumeRun(ctx context.Context, runID string, by db.Actor, owe ...db.Owing) (db.Run, error)
	ResumeFresh(ctx context.Context, runID string, by db.Actor, owe ...db.Owing) (db.Run, error)
	LiveHomes(ctx context.Context) ([]db.Home, error)
	ResolveGate(ctx context.Context, g db.GateResolution) (db.GateResult, error)
	RecordGateReply(ctx context.Context, runID, node string, reply db.GateReplyData) (db.Event, error)
	CancelRun(ctx context.Context, runID string, by db.Actor, reason string, owe ...db.Owing) (db.Run, error)
	Events(ctx context.Context, runID string) ([]db.Event, error)
	GroupPlace(ctx context.Context, runID string) (db.GroupPlace, error)
	SetGroupNotes(f db.GroupNotes)
	SetChildNotes(f db.ChildNotes)
	FindRunsByPrefix(ctx context.Context, prefix string, limit int) ([]db.Run, error)
	FindResumable(ctx context.Context, workflow, parentConversationID string) (db.Run, error)
	ListRuns(ctx context.Context, f db.RunFilter) ([]db.Run, error)
	CountRuns(ctx context.Context, f db.RunFilter) (map[db.Status]int, error)
	GetSession(ctx context.Context, conversationID, runID, nodeID string) (db.Session, error)
	SetSession(ctx context.Context, s db.Session) error
	db.UsageStore
}
