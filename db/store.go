package db

import (
	"context"
	"time"
)

// Store is the contract of a run store. Each transition method is one compare-and-set on the run's
// status (and lease token where a worker writes), with its event appended in the same transaction.
// A lost race returns a *TransitionError carrying the status actually found; a worker whose lease is
// gone gets an error matching ErrLeaseLost.
//
// A transition's owe arguments say which chat messages it owes (the outbox, Outbox), rendered from
// the run as the transition leaves it: they are recorded in the transition's transaction, or not
// at all.
type Store interface {
	Outbox
	UsageStore
	// CreateRun inserts a queued run and its run_created event.
	CreateRun(ctx context.Context, n NewRun) (Run, error)
	// CreateRuns is CreateRun for each of ns with one commit; the errors are per run.
	CreateRuns(ctx context.Context, ns []NewRun) ([]Run, []error)
	// ClaimRun moves the oldest queued run in reach to running under a fresh lease for owner, valid
	// for ttl: a worker claims the runs it can report on. It returns ErrNoQueuedRun when nothing it
	// may take is queued.
	ClaimRun(ctx context.Context, owner string, ttl time.Duration, reach Reach) (Run, error)
	// ClaimRuns is ClaimRun for up to n runs (at most MaxClaimBatch) in one transaction, oldest first; it
	// returns ErrNoQueuedRun when it claimed none.
	ClaimRuns(ctx context.Context, owner string, ttl time.Duration, reach Reach, n int) ([]Run, error)
	// Heartbeat extends a held lease by ttl from now.
	Heartbeat(ctx context.Context, l Lease, ttl time.Duration) error
	// RenewLeases is Heartbeat for up to MaxRenewBatch leases in one transaction; lost are those it could
	// not extend because the run left running or holds another lease.
	RenewLeases(ctx context.Context, ls []Lease, ttl time.Duration) (lost []Lease, err error)
	// PauseRun moves running -> paused with p as the pause context (gate_requested for gates,
	// run_paused for recovery pauses).
	PauseRun(ctx context.Context, l Lease, p Pause, owe ...Owing) (Run, error)
	// CompleteRun moves running -> completed with the final output.
	CompleteRun(ctx context.Context, l Lease, output string, owe ...Owing) (Run, error)
	// FailRun moves running -> failed with the reason.
	FailRun(ctx context.Context, l Lease, e RunError, owe ...Owing) (Run, error)
	// ReleaseRun hands a running run back to the queue without counting a recovery (graceful
	// shutdown).
	ReleaseRun(ctx context.Context, l Lease) (Run, error)
	// ResumeRun is the explicit resume: failed or recovery-paused -> queued. It is the single place
	// that claims a run for resuming; two concurrent resumes have exactly one winner.
	ResumeRun(ctx context.Context, runID string, by Actor, owe ...Owing) (Run, error)
	// ResumeFresh is ResumeRun for a run whose workspace is lost: the run forgets its workspace and
	// its node progress (run_resume_requested with fresh_workspace), so the next worker runs it from
	// its first node, with the same arguments, in a new workspace.
	ResumeFresh(ctx context.Context, runID string, by Actor, owe ...Owing) (Run, error)
	// SetWorkspace records where the run's workspace now lives (workspace_created), under the lease.
	SetWorkspace(ctx context.Context, l Lease, w Workspace) (Run, error)
	// AnnounceHome records (or renews) that process h.Owner sees the THREADFLOW_HOME h.Token until
	// ttl from now, and forgets announcements that expired.
	AnnounceHome(ctx context.Context, h Home, ttl time.Duration) error
	// LiveHomes lists the announcements that have not expired.
	LiveHomes(ctx context.Context) ([]Home, error)
	// ResolveGate answers a paused gate, as JudgeGate decides: approve and answer -> queued once
	// enough distinct people approved (until then the approval is counted and the run stays paused),
	// reject -> cancelled. Someone the gate does not allow gets a *GateRefusedError, recorded as a
	// gate_answer_refused event; an answer to a gate already answered gets a *GateResolvedError
	// describing the first answer.
	ResolveGate(ctx context.Context, g GateResolution) (GateResult, error)
	// RecordGateReply records a reply to the gate the run waits at that was neither a clear yes nor
	// a clear no (gate_reply_unclear); its seq lets a later answer quote it (GateResolution.ReplySeq).
	RecordGateReply(ctx context.Context, runID, node string, reply GateReplyData) (Event, error)
	// FireGateTimers fires the gate timeouts and reminders that are due (MaxTimerBatch runs at most
	// per call), each once whichever process calls it (JudgeTimer), and returns what fired, of runs
	// in reach only: a process fires the timers it can report. What owe says a fired timer owes is
	// recorded in its transaction (owe may be nil).
	FireGateTimers(ctx context.Context, reach Reach, owe func(GateTimer) []Owed) ([]GateTimer, error)
	// NextGateTimer returns when the next gate timer of a run in reach is due; ok is false when none
	// is set.
	NextGateTimer(ctx context.Context, reach Reach) (next time.Time, ok bool, err error)
	// AttachTerminal records that the terminal process owner is attached to a conversation until
	// ttl from now; calling it again renews it. While it is attached, the conversation's runs are out
	// of every Reach.Unattended.
	AttachTerminal(ctx context.Context, conversationID, owner string, ttl time.Duration) error
	// DetachTerminal ends every attachment of the terminal process owner.
	DetachTerminal(ctx context.Context, owner string) error
	// CancelRun abandons a queued, running, paused or failed run.
	CancelRun(ctx context.Context, runID string, by Actor, reason string, owe ...Owing) (Run, error)
	// RescueExpired re-queues running runs whose lease expired before now, adding one to their
	// recovery counter; a run that would exceed maxRecoveries moves to failed instead.
	RescueExpired(ctx context.Context, maxRecoveries int) ([]Rescue, error)
	// NextLeaseExpiry returns the earliest lease expiry of a running run that is not yet past (at
	// or after now), so a rescuer can look again just then; ok is false when no lease is pending.
	NextLeaseExpiry(ctx context.Context) (next time.Time, ok bool, err error)

	// RecordEvent appends an event under a held lease. For node lifecycle types (EventType.Idempotent)
	// recording the same (type, node, attempt) again with the same data is a no-op returning the
	// stored event, and with different data is an error matching ErrConflict. Recording
	// node_completed resets the run's recovery counter: the run made progress.
	RecordEvent(ctx context.Context, l Lease, e Event) (Event, error)
	// RecordEvents records es in order, each exactly as RecordEvent would, committing them together
	// when it can; the errors are per event.
	RecordEvents(ctx context.Context, l Lease, es []Event) ([]Event, []error)
	// Events returns a run's events in sequence order.
	Events(ctx context.Context, runID string) ([]Event, error)

	// GroupPlace says where a run stands in its concurrency group (holding it, or its place in
	// line); ErrNotFound when it has no place (no group, or it ended).
	GroupPlace(ctx context.Context, runID string) (GroupPlace, error)
	// SetGroupNotes sets what a run waiting for its concurrency group owes its thread when it is
	// created waiting and each time its place changes (GroupNotes). Set once, before runs are created.
	SetGroupNotes(f GroupNotes)
	// SetChildNotes sets what a child run cancelled with its parent owes (ChildNotes). Set once,
	// before runs are created.
	SetChildNotes(f ChildNotes)
	// GroupWaiters lists the runs waiting in line for group, first first.
	GroupWaiters(ctx context.Context, group string) ([]string, error)

	// GetRun returns one run or ErrNotFound.
	GetRun(ctx context.Context, runID string) (Run, error)
	// ActionEvents returns the events of every run that record what a person did (ActionTypes)
	// at or after since, newest first, at most limit (DefaultListLimit when limit is 0): the audit.
	ActionEvents(ctx context.Context, since time.Time, limit int) ([]Event, error)
	// FindRunsByPrefix returns the runs whose id starts with prefix, newest first as ListRuns lists
	// them (at most limit; DefaultListLimit when limit is 0).
	FindRunsByPrefix(ctx context.Context, prefix string, limit int) ([]Run, error)
	// FindResumable returns the newest failed or paused run of workflow in the parent conversation,
	// or ErrNotFound.
	FindResumable(ctx context.Context, workflow, parentConversationID string) (Run, error)
	// ListRuns returns runs matching f, newest first.
	ListRuns(ctx context.Context, f RunFilter) ([]Run, error)
	// CountRuns counts the runs matching f per status; a status without runs is absent. With
	// f.Limit, a count stops past it (Limit+1 says "more than Limit"), so it costs the same at any
	// size of history.
	CountRuns(ctx context.Context, f RunFilter) (map[Status]int, error)

	// SetRunConversation moves a run to another conversation: adapters that open a thread per run
	// record the thread here so replies in it reach the run. It is not a status transition.
	SetRunConversation(ctx context.Context, runID, conversationID string) error

	// SetMessageRef records which message of the run is its ref.Kind; an empty MessageID forgets it.
	SetMessageRef(ctx context.Context, ref MessageRef) error
	// MessageRefs returns the messages recorded for a run.
	MessageRefs(ctx context.Context, runID string) ([]MessageRef, error)

	// AppendMessage adds a message to its conversation's transcript (bounded by
	// TranscriptMessage.Bounded) and returns it with its Seq; the conversation's oldest messages
	// beyond TranscriptKeep are deleted in the same transaction. A message whose (platform, channel,
	// message id) is recorded already is edited instead.
	AppendMessage(ctx context.Context, m TranscriptMessage) (TranscriptMessage, error)
	// AppendMessageOnce is AppendMessage for a message that must be recorded once: when its
	// (platform, channel, message id) is recorded already, it returns that message unchanged and
	// false (a repeated post of an idempotency-keyed message), else it adds m and returns true.
	AppendMessageOnce(ctx context.Context, m TranscriptMessage) (TranscriptMessage, bool, error)
	// FindMessage returns the recorded message (platform, channel, message id); ErrNotFound if it
	// was never recorded or was trimmed since (TranscriptKeep).
	FindMessage(ctx context.Context, platform, channelID, messageID string) (TranscriptMessage, error)
	// EditMessage replaces the text and body of the recorded message (platform, channel, message
	// id), marks it edited and gives it a fresh Seq; ErrNotFound if it was never recorded. RunID
	// and ToUser are kept unless m sets them.
	EditMessage(ctx context.Context, m TranscriptMessage) (TranscriptMessage, error)
	// Transcript returns the newest limit messages of a conversation, oldest first.
	Transcript(ctx context.Context, conversationID string, limit int) ([]TranscriptMessage, error)
	// TranscriptChanged returns a channel closed when the conversation's transcript may have
	// changed, written by this process or (PostgreSQL) by any replica on the same database.
	TranscriptChanged(conversationID string) <-chan struct{}

	// EnsureConversation inserts c when its id is new and returns the stored conversation.
	EnsureConversation(ctx context.Context, c Conversation) (Conversation, error)
	// GetSession returns the session stored for (conversation) or (run, node); ErrNotFound if none.
	GetSession(ctx context.Context, conversationID, runID, nodeID string) (Session, error)
	// SetSession stores s; an empty SessionID clears the stored id.
	SetSession(ctx context.Context, s Session) error

	// MarkInbound records a platform event id as handled, keeping no message. first is false when it
	// was recorded already.
	MarkInbound(ctx context.Context, platform, eventID string) (first bool, err error)
	// KeepInbound records several platform events in one transaction, each keeping its message
	// under its owner's claim until it is handled (KeptEvent): first[i] tells whether events[i] was
	// new. An event recorded before, kept or handled, is not new. An event listed twice is new at most
	// at its first position. On error nothing was recorded.
	KeepInbound(ctx context.Context, events []KeptEvent) (first []bool, err error)
	// HandledInbound records that the events were handled: their messages are kept no longer.
	HandledInbound(ctx context.Context, events []InboundEvent) error
	// RenewInbound extends by ttl the claim of every event owner keeps, and says how many it holds.
	RenewInbound(ctx context.Context, owner string, ttl time.Duration) (int, error)
	// ClaimInbound takes over for owner, for ttl, at most n kept events of platform whose claim
	// lapsed, and returns them with their messages. Each lapsed event goes to one claimant.
	ClaimInbound(ctx context.Context, platform, owner string, ttl time.Duration, n int) ([]KeptEvent, error)

	// FireTrigger records one fire of a trigger and, as its overlap rule allows, creates its run,
	// once whichever process calls it (Machine.FireTrigger).
	FireTrigger(ctx context.Context, f Fire) (FireResult, error)
	// StartWaitingFire starts the run of the trigger's oldest waiting fire once its earlier run ended.
	StartWaitingFire(ctx context.Context, trigger string, run NewRun) (FireResult, bool, error)
	// TriggerStates is every recorded trigger's state, by trigger.
	TriggerStates(ctx context.Context) (map[string]TriggerState, error)
	// NoteTriggers records triggers not recorded yet, first seen now.
	NoteTriggers(ctx context.Context, triggers []string) error
	// TriggerFires lists a trigger's newest fires.
	TriggerFires(ctx context.Context, trigger string, limit int) ([]TriggerFire, error)
	// FirePayload is the payload of the delivery that started the run.
	FirePayload(ctx context.Context, runID string) ([]byte, bool, error)
	// Prune deletes the runs past their retention (p.Retention) with everything they own: their
	// events, messages owed and recorded, transcript messages and node sessions, MaxPruneBatch runs
	// per transaction; each run once, whichever processes prune at the same time. A run that
	// still owes its thread a message stays. A dry run deletes nothing and says what it would.
	Prune(ctx context.Context, p PruneRequest) (PruneReport, error)

	// Ready reports nil when the database answers and every migration is applied.
	Ready(ctx context.Context) error
	// ProbeWrite makes one small write (the replica's row in write_probes) to prove the database
	// accepts writes; a full disk or a read-only database fails it with ErrUnwritable.
	ProbeWrite(ctx context.Context, replica string) error
	// Close releases the database.
	Close() error
}

// Options configure an engine. Now is injected so tests control lease expiry; nil means time.Now.
type Options struct {
	Now func() time.Time
	// Connections bounds the connections a PostgreSQL store keeps open at once; 0 is the engine's
	// default, and the database URL's pool_max_conns wins over both. SQLite ignores it.
	Connections int32
}

// Clock returns o.Now or time.Now.
func (o Options) Clock() func() time.Time {
	if o.Now != nil {
		return o.Now
	}
	return time.Now
}

// Rescue is one run handled by RescueExpired.
type Rescue struct {
	Run       Run
	PrevOwner string
	Exhausted bool // the recovery budget ran out and the run moved to failed
}
