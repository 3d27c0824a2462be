package execution

import (
	"context"
	"time"

	"threadflow/agent"
	"threadflow/conversation"
	"threadflow/db"
)

// Store is what execution needs from a run store: claiming runs, holding them by a lease, and
// recording their events and stops under it. db/sqlite and db/postgres implement it; the state
// machine it enforces is documented in docs/state-machine.md.
type Store interface {
	ClaimRuns(ctx context.Context, owner string, ttl time.Duration, reach db.Reach, n int) ([]db.Run, error)
	Heartbeat(ctx context.Context, l db.Lease, ttl time.Duration) error
	RenewLeases(ctx context.Context, ls []db.Lease, ttl time.Duration) ([]db.Lease, error)
	PauseRun(ctx context.Context, l db.Lease, p db.Pause, owe ...db.Owing) (db.Run, error)
	CompleteRun(ctx context.Context, l db.Lease, output string, owe ...db.Owing) (db.Run, error)
	FailRun(ctx context.Context, l db.Lease, e db.RunError, owe ...db.Owing) (db.Run, error)
	ReleaseRun(ctx context.Context, l db.Lease) (db.Run, error)
	SetWorkspace(ctx context.Context, l db.Lease, w db.Workspace) (db.Run, error)
	RecordEvents(ctx context.Context, l db.Lease, es []db.Event) ([]db.Event, []error)
	Events(ctx context.Context, runID string) ([]db.Event, error)
	GetRun(ctx context.Context, runID string) (db.Run, error)
	CreateRun(ctx context.Context, n db.NewRun) (db.Run, error)                                               // child runs (child.go)
	ResumeRun(ctx context.Context, runID string, by db.Actor, owe ...db.Owing) (db.Run, error)                // a resumed parent's failed child
	CancelRun(ctx context.Context, runID string, by db.Actor, reason string, owe ...db.Owing) (db.Run, error) // a cancel node (cancelnode.go)
	GetSession(ctx context.Context, conversationID, runID, nodeID string) (db.Session, error)
	SetSession(ctx context.Context, s db.Session) error
	FirePayload(ctx context.Context, runID string) ([]byte, bool, error)
	AgentUsage(ctx context.Context, q db.UsageQuery) ([]db.UsageSum, error)
}

// Provider runs one AI agent turn. package agent implements it for the Claude Code and Codex CLIs.
type Provider interface {
	Name() string
	Run(ctx context.Context, r agent.Request) (agent.Result, error)
}

// Providers finds a provider by name ("" means the configured default). It returns an error that
// says what to configure when the provider is unknown or off.
type Providers interface {
	Provider(name string) (Provider, error)
}

// Notifier tells people about a run where it was started. Reporter is the implementation that
// renders notices for every adapter's conversation.Outbox.
type Notifier interface {
	Notify(ctx context.Context, n Notice)
}

// NoticeKind says what happened to a run.
type NoticeKind string

// Notice kinds.
const (
	NoticeStarted   NoticeKind = "started"
	NoticeProgress  NoticeKind = "progress"
	NoticeGate      NoticeKind = "gate"
	NoticeCompleted NoticeKind = "completed"
	NoticeFailed    NoticeKind = "failed"
	NoticePaused    NoticeKind = "paused" // recovery pause: resumable with a hint
	NoticeCancelled NoticeKind = "cancelled"
	NoticeNote      NoticeKind = "note" // a one-line remark, such as "session continuity was lost"
)

// Notice is one thing worth telling about a run.
type Notice struct {
	Kind  NoticeKind
	Run   db.Run
	Node  string
	Nodes []NodeStatus // progress: every node's state
	Text  conversation.Text
	// Key names a note for good (a retry of a node attempt), so saying it twice posts it once;
	// "" owes it once per Notify.
	Key string
	// Usage is what the run's agent turns used so far, for the messages that end or pause it; nil
	// when it had none.
	Usage *db.UsageSum
	// By is who cancelled the run (NoticeCancelled), when a person did: its requester is told
	// directly unless it was them (reporting). "" for a gate's answer or timer, which tell of
	// their own.
	By string
}

// NodeStatus is one node's state for progress displays.
type NodeStatus struct {
	ID       string
	State    string
	Attempt  int
	Duration time.Duration
}
