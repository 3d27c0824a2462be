// Package db owns Threadflow's durable state: the domain types of runs, run events, conversations,
// AI sessions and inbound events, the run state machine, the Store contract that every database engine
// implements, and the domain errors that driver errors are translated into. Engines live in
// db/sqlite and db/postgres; db/storetest is the conformance suite both must pass, db/drivertest
// the one their drivers pass.
//
// This package imports no database driver, so the orchestrator can depend on it freely. It
// decides; the SQL its decisions need is rendered here (the sql*.go files) in each engine's
// Dialect, and the engines only run it.
package db

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"threadflow/platform"
)

// Status is a run's place in the state machine. The strings are stored in the database and logged.
type Status string

// The run statuses. See docs/state-machine.md for the diagram.
const (
	StatusQueued    Status = "queued"
	StatusRunning   Status = "running"
	StatusPaused    Status = "paused"
	StatusFailed    Status = "failed"
	StatusCompleted Status = "completed"
	StatusCancelled Status = "cancelled"
)

// AllStatuses lists every status in state-machine order.
var AllStatuses = []Status{StatusQueued, StatusRunning, StatusPaused, StatusFailed, StatusCompleted, StatusCancelled}

// Terminal reports whether s is absorbing. Only completed and cancelled are; failed is resumable.
func (s Status) Terminal() bool { return s == StatusCompleted || s == StatusCancelled }

// Valid reports whether s is one of the known statuses.
func (s Status) Valid() bool {
	for _, v := range AllStatuses {
		if s == v {
			return true
		}
	}
	return false
}

// PauseKind says what a paused run waits for.
type PauseKind string

// Pause kinds. Approval and loop pauses are gates answered by a person; a recovery pause is a
// resumable failure (for example a missing provider binary) that waits for an explicit resume.
const (
	PauseApproval PauseKind = "approval"
	PauseLoop     PauseKind = "loop"
	PauseRecovery PauseKind = "recovery"
)

// IsGate reports whether the pause is answered by approve, reject or a text answer.
func (k PauseKind) IsGate() bool { return k == PauseApproval || k == PauseLoop }

// Run is one execution of a workflow. Node progress is not here: it lives in the run's events.
type Run struct {
	ID                   string
	Workflow             string
	ConversationID       string
	ParentConversationID string
	UserID               string
	UserName             string // the requester's display name when the run was created; "" if none
	UserMessage          string // the arguments as the user typed them
	Status               Status
	WorkingPath          string
	WorkspaceHome        string            // token of the THREADFLOW_HOME holding the workspace; "" until it is made
	WorkspaceRemote      string            // WORKSPACE_REMOTE the workspace is pushed to (no credentials); "" for none
	WorkflowSource       []byte            // frozen at creation; resume executes this copy
	WorkflowDigest       string            // sha256 hex of WorkflowSource
	Inputs               map[string]string // typed inputs by name; nil when the workflow has none
	ParentRunID          string            // the run whose `workflow:` node started this one; "" for a run a person started
	ParentNode           string            // that node of ParentRunID; "" with it
	Group                string            // the concurrency group the run joined; "" for none
	Meta                 Meta
	Attempt              int // explicit resumes so far
	Recoveries           int // rescues since the last node progress
	LeaseOwner           string
	LeaseToken           string
	LeaseExpiresAt       time.Time // zero when no lease is held
	HeartbeatAt          time.Time
	CreatedAt            time.Time
	QueuedAt             time.Time
	StartedAt            time.Time
	FinishedAt           time.Time
}

// Lease is what a worker holds while a run is running. Every write a worker makes carries it.
type Lease struct {
	RunID string
	Owner string
	Token string
}

// Lease returns the run's current lease.
func (r Run) Lease() Lease { return Lease{RunID: r.ID, Owner: r.LeaseOwner, Token: r.LeaseToken} }

// Meta is the JSON metadata of a run.
type Meta struct {
	Pause       *Pause    `json:"pause,omitempty"`
	LastError   *RunError `json:"last_error,omitempty"`
	ResumeHint  string    `json:"resume_hint,omitempty"`
	ResumedFrom Status    `json:"resumed_from,omitempty"` // status the latest explicit resume left
	Output      string    `json:"output,omitempty"`       // final output of a completed run
}

// Pause describes what a paused run waits for.
type Pause struct {
	Kind            PauseKind `json:"kind"`
	Node            string    `json:"node,omitempty"`
	Message         string    `json:"message,omitempty"`
	LoopIteration   int       `json:"loop_iteration,omitempty"`
	SessionID       string    `json:"session_id,omitempty"` // provider session of the gated node
	CaptureResponse bool      `json:"capture_response,omitempty"`
	Error           string    `json:"error,omitempty"`          // recovery pauses: what went wrong
	ResumeHint      string    `json:"resume_hint,omitempty"`    // recovery pauses: what to do about it
	Since           time.Time `json:"since,omitzero"`           // when the run paused: the age of a waiting gate
	WorkspaceLost   bool      `json:"workspace_lost,omitempty"` // recovery pauses: no replica can reach the run's files
	// WorkspaceUnreachable: recovery pauses: WORKSPACE_REMOTE, which keeps the run's workspace, did
	// not answer. A plain resume tries it again; --fresh-workspace may start the run over instead.
	WorkspaceUnreachable bool `json:"workspace_unreachable,omitempty"`

	// Approval gates only: who may answer, and the gate's timers (see gates.go).
	Gate      *GatePolicy `json:"gate,omitempty"`       // nil: anyone allowed to use the bot answers alone
	DueAt     time.Time   `json:"due_at,omitzero"`      // an unanswered gate times out then; zero: never
	OnTimeout string      `json:"on_timeout,omitempty"` // TimeoutReject or TimeoutAbandon
	RemindAt  time.Time   `json:"remind_at,omitzero"`   // one reminder is posted then; zero: none
	// EscalateAt: the gate escalates then (Gate.EscalateTo may answer too, and is told); zero: never.
	EscalateAt time.Time `json:"escalate_at,omitzero"`
	Escalated  bool      `json:"escalated,omitempty"` // the escalation fired
}

// Widened reports whether the gate escalated: its EscalateTo may answer besides its approvers.
func (p *Pause) Widened() bool { return p != nil && p.Escalated && p.Gate != nil }

// Answerers are the people (ids and groups) the gate names as who may answer: its approvers, and
// once it escalated its escalate_to too; whose groups a person's membership is checked against.
func (p *Pause) Answerers() platform.People {
	if p == nil || p.Gate == nil {
		return nil
	}
	if !p.Widened() {
		return p.Gate.Approvers
	}
	return append(slices.Clone(p.Gate.Approvers), p.Gate.EscalateTo...)
}

// ErrorClass is decided where an error happens and steers what the orchestrator does with it.
type ErrorClass string

// Error classes.
const (
	ClassTransient    ErrorClass = "transient"     // retry within the node budget
	ClassStaleSession ErrorClass = "stale_session" // fresh-session fallback
	ClassInfra        ErrorClass = "infrastructure"
	ClassPermanent    ErrorClass = "permanent"
	ClassBudget       ErrorClass = "budget_exhausted"
)

// RunError is the user-safe record of why a run stopped.
type RunError struct {
	Node    string     `json:"node,omitempty"`
	Class   ErrorClass `json:"class,omitempty"`
	Message string     `json:"message"`
}

// Actor is who asks for a transition (a resume, a cancel) and how the bot knew it was them: Via
// is conversation.ViaSignIn for someone signed in to the dashboard, "" for the platform's own
// word. Both are recorded in the transition's event, for the audit.
type Actor struct {
	ID  string // platform-qualified
	Via string
}

// NewRun is what the dispatcher knows when it creates a run.
type NewRun struct {
	ID                   string // optional; generated when empty
	Workflow             string
	ConversationID       string
	ParentConversationID string
	UserID               string
	UserName             string // display name for messages, already bounded by the caller; never authorization
	UserVia              string // how the adapter knew who UserID is (conversation.ViaSignIn), for the audit; "" for the platform's word
	UserMessage          string
	WorkingPath          string
	WorkspaceHome        string // token of the THREADFLOW_HOME holding the workspace; "" until it is made
	WorkspaceRemote      string // WORKSPACE_REMOTE the workspace is pushed to (no credentials); "" for none
	WorkflowSource       []byte
	ParentRunID          string // a child run: the run whose node started it (see ChildRunID); "" otherwise
	ParentNode           string // that node
	// Inputs are the run's typed inputs by name (workflow.Workflow.RunInputs); nil for none.
	Inputs map[string]string
	// Group is the concurrency group the run joins ("" for none) and WhenBusy what it does when
	// another run holds it: GroupQueue (wait in line) or GroupRefuse (a *GroupBusyError, nothing
	// written).
	Group    string
	WhenBusy string
	// Conversation, when set, is recorded (if new) in the same transaction: the run's own thread,
	// opened just before the run was created.
	Conversation *Conversation
	// Parents are recorded (if new) in the same transaction before Conversation, in order, parents
	// before their threads: the channel (and thread) the run was asked for in, so the first command
	// in a conversation costs no write of its own.
	Parents []Conversation
	// Messages are chat messages posted for the run before it existed (its live status message),
	// recorded in the same transaction; their RunID is filled in.
	Messages []MessageRef
	// Owe are the messages the new run owes (its announcement, its status message), recorded in the
	// same transaction: a run is announced only once it exists.
	Owe []Owed
}

// EventType names an entry of the append-only run_events table.
type EventType string

// Event types.
const (
	EventRunCreated      EventType = "run_created"
	EventRunClaimed      EventType = "run_claimed"
	EventRunReleased     EventType = "run_released"
	EventRunRescued      EventType = "run_rescued"
	EventRunPaused       EventType = "run_paused"
	EventResumeRequested EventType = "run_resume_requested"
	EventResumeFailed    EventType = "resume_failed"
	EventRunCompleted    EventType = "run_completed"
	EventRunFailed       EventType = "run_failed"
	EventRunCancelled    EventType = "run_cancelled"
	EventNodeStarted     EventType = "node_started"
	EventNodeCompleted   EventType = "node_completed"
	EventNodeFailed      EventType = "node_failed"
	EventNodeSkipped     EventType = "node_skipped"
	EventLoopIteration   EventType = "loop_iteration_completed"
	EventGateRequested   EventType = "gate_requested"
	EventGateResolved    EventType = "gate_resolved"
	EventSessionReset    EventType = "session_reset"
	EventGateApproval    EventType = "gate_approval"       // one of several required approvals
	EventGateRefused     EventType = "gate_answer_refused" // someone not allowed tried to answer
	EventGateReply       EventType = "gate_reply_unclear"  // a reply that was neither a clear yes nor no
	EventGateReminded    EventType = "gate_reminder_sent"
	EventGateEscalated   EventType = "gate_escalated"    // the gate's escalate_after came: escalate_to may answer too
	EventNotified        EventType = "notified"          // people were told (mentioned, sent a direct message)
	EventWorkspace       EventType = "workspace_created" // a worker made (or recreated) the run's workspace
	EventAgentUsage      EventType = "agent_usage"       // what one agent turn used (AgentUsageData)
	EventBudgetChanged   EventType = "budget_changed"    // a resume re-read the run's budgets
)

// Idempotent reports whether recording the same (run, type, node, attempt) twice is a no-op rather
// than a second entry. These are the node lifecycle records a recovering worker may replay.
func (t EventType) Idempotent() bool {
	switch t {
	case EventNodeStarted, EventNodeCompleted, EventNodeFailed, EventNodeSkipped, EventLoopIteration:
		return true
	}
	return false
}

// LifecycleIndexWhere is the WHERE clause of the partial unique index on lifecycle events
// (run_events (run_id, type, node_id, attempt) in both engines' migrations), the types Idempotent
// lists. A query must repeat it word for word to use that index: neither SQLite nor a generic
// PostgreSQL plan can tell that a bound `type = ?` falls inside it, and without the index finding
// a node's lifecycle event scans the whole history of its run, once per node.
const LifecycleIndexWhere = `type IN ('node_started', 'node_completed', 'node_failed', 'node_skipped', 'loop_iteration_completed')`

// Event is one entry of a run's history. Seq is assigned by the store, 1-based and gap-free per run.
type Event struct {
	RunID   string
	Seq     int64
	Type    EventType
	NodeID  string
	Attempt int
	Data    json.RawMessage // JSON object; nil is stored as {}
	At      time.Time
}

// RunFilter selects runs for listings. Zero fields do not filter.
type RunFilter struct {
	Statuses             []Status
	Workflow             string
	ConversationID       string
	ParentConversationID string
	// InConversation: runs started in this conversation or reporting in it (a thread the run
	// opened there), as /workflow status and the dashboard's conversation filter list them.
	InConversation string
	UserID         string
	ParentRunID    string // the children of this run
	Limit          int    // 0 means 100
	// WithoutSource: the runs come without their frozen workflow source (WorkflowSource empty),
	// for lists that show runs and never run them: the source is the largest column of a run
	// (54 KB at 1,000 nodes), and a list of 50 would read it 50 times (/workflow status).
	WithoutSource bool
	// Each lists each status it names up to its own limit, in one list newest first, instead of
	// Statuses up to Limit together (both are then ignored): /workflow status's sections, 50 active
	// runs and 5 of each stopped state, in one query.
	Each map[Status]int
}

// Conversation is a place where messages are exchanged: a channel, a thread, a DM, a terminal.
type Conversation struct {
	ID        string // stable key, see ConversationKey
	Platform  string
	ChannelID string
	ThreadID  string
	ParentID  string // the channel conversation of a thread; empty for top-level
	CreatedAt time.Time
}

// ConversationKey is the stable id of a conversation on a platform.
func ConversationKey(platform, channel, thread string) string {
	if thread == "" {
		return platform + ":" + channel
	}
	return platform + ":" + channel + ":" + thread
}

// Session is a stored AI provider session, either of a conversation (RunID empty) or of one node of
// a run. An empty SessionID means "none": the next turn starts fresh.
type Session struct {
	ConversationID string
	RunID          string
	NodeID         string
	Provider       string
	SessionID      string
	UpdatedAt      time.Time
}

// Check refuses a session no engine stores: one without its provider, whose session id would mean
// nothing to the next turn.
func (s Session) Check() error {
	if s.Provider == "" {
		return errors.New("set session: the provider is required")
	}
	return nil
}

// Checked validates a conversation before it is stored and fills in its key when the caller left
// it out, so both engines accept and refuse exactly the same conversations.
func (c Conversation) Checked() (Conversation, error) {
	if c.Platform == "" || c.ChannelID == "" {
		return c, fmt.Errorf("conversation %q: platform and channel are required", c.ID)
	}
	if c.ID == "" {
		c.ID = ConversationKey(c.Platform, c.ChannelID, c.ThreadID)
	}
	return c, nil
}

// CheckedConversations checks the conversations a new run brings along, in the order they are
// recorded (its Parents, then its Conversation): each must be valid, and Conversation must be the
// run's.
func (n NewRun) CheckedConversations() ([]Conversation, error) {
	out := make([]Conversation, 0, len(n.Parents)+1)
	for _, c := range n.Parents {
		c, err := c.Checked()
		if err != nil {
			return nil, fmt.Errorf("create run %s: %w", n.ID, err)
		}
		out = append(out, c)
	}
	if n.Conversation == nil {
		return out, nil
	}
	c, err := n.Conversation.Checked()
	if err != nil {
		return nil, fmt.Errorf("create run %s: %w", n.ID, err)
	}
	if c.ID != n.ConversationID {
		return nil, fmt.Errorf("create run %s: the conversation given is %s, not the run's %s", n.ID, c.ID, n.ConversationID)
	}
	return append(out, c), nil
}

// ParseConversationKey splits a key made by ConversationKey. Platform and channel ids never contain
// ':' (ids with one are refused where conversations are created), so the split is unambiguous.
func ParseConversationKey(id string) (platform, channel, thread string, ok bool) {
	parts := strings.SplitN(id, ":", 3)
	if len(parts) < 2 || parts[0] == "" || parts[1] == "" {
		return "", "", "", false
	}
	if len(parts) == 3 {
		thread = parts[2]
	}
	return parts[0], parts[1], thread, true
}

// MessageRef names a chat message that belongs to a run, by what it is for (Kind: "status" for the
// live status message, "gate" for the question waiting for an answer), so any replica can edit it.
type MessageRef struct {
	RunID     string
	Kind      string
	Platform  string
	ChannelID string
	ThreadID  string
	MessageID string // empty in SetMessageRef: the run no longer has such a message
}
