package db

import (
	"encoding/json"
	"reflect"
	"time"
)

// The payloads of run events: one Go type per event type, shared by both engines and every reader
// (the executor, status, the dashboard, the metrics). Their JSON is what run_events.data holds, so a
// field is never renamed or retyped: events written years ago must still read. events_test.go pins
// the JSON of each type. Fields of the types that replaced map literals are in key order, so the
// bytes are those the maps produced.
type (
	// RunCreatedData is the data of run_created.
	RunCreatedData struct {
		User     string `json:"user"`
		Workflow string `json:"workflow"`
		Via      string `json:"via,omitempty"` // how the bot knew who User is, when not from the platform itself
	}
	// RunClaimedData is the data of run_claimed.
	RunClaimedData struct {
		Owner string `json:"owner"`
	}
	// RunReleasedData is the data of run_released: the worker that handed the run back.
	RunReleasedData struct {
		Owner string `json:"owner"`
	}
	// RunRescuedData is the data of run_rescued: the worker whose lease expired, and the run's
	// recoveries counting this one.
	RunRescuedData struct {
		PrevOwner  string `json:"prev_owner"`
		Recoveries int    `json:"recoveries"`
	}
	// ResumeRequestedData is the data of run_resume_requested.
	ResumeRequestedData struct {
		By   string `json:"by"`
		From Status `json:"from"` // the status the run was resumed from
		// FreshWorkspace: the run starts again from its first node in a new workspace.
		FreshWorkspace bool   `json:"fresh_workspace,omitempty"`
		Via            string `json:"via,omitempty"` // how the bot knew who By is, when not from the platform itself
	}
	// RunCompletedData is the data of run_completed: {}.
	RunCompletedData struct{}
	// GateRemindedData is the data of gate_reminder_sent: {}.
	GateRemindedData struct{}
	// GateEscalatedData is the data of gate_escalated: who the escalation let answer too.
	GateEscalatedData struct {
		To     []string `json:"to,omitempty"`     // ids and groups (escalate_to)
		Admins bool     `json:"admins,omitempty"` // escalate_to lists @admins
	}
	// NotifiedData is the data of notified: one notification delivered (a message that mentions
	// people, or direct messages), written in the delivery's transaction.
	NotifiedData struct {
		About   string   `json:"about"`             // what it told: gate, reminder, escalation, decision, end
		How     string   `json:"how"`               // mention or dm
		To      []string `json:"to,omitempty"`      // who was reached: ids and groups mentioned, or the ids sent a DM
		Skipped []string `json:"skipped,omitempty"` // ids a DM could not reach (they refuse DMs from the bot)
		Why     string   `json:"why,omitempty"`     // why some were not reached (a group too big, a lookup that failed)
	}
	// SessionResetData is the data of session_reset: a node's provider session was dropped.
	SessionResetData struct {
		Provider string `json:"provider"`
		Reason   string `json:"reason"`
	}
	// The node events' payloads. One struct served them all once (NodeData), so each keeps that
	// struct's keys in its order: the bytes are the ones it wrote.

	// NodeOutputData is the output a node event records, when the node made one.
	NodeOutputData struct {
		Output      string `json:"output,omitempty"`       // the inline value of the output
		OutputBytes int64  `json:"output_bytes,omitempty"` // size of the full output
		OutputPath  string `json:"output_path,omitempty"`  // the file holding the full output
	}
	// NodeStartedData is the data of node_started: {}.
	NodeStartedData struct{}
	// NodeCompletedData is the data of node_completed.
	NodeCompletedData struct {
		NodeOutputData
		DurationMS *int64 `json:"duration_ms,omitempty"` // nil in events that predate it
	}
	// NodeFailedData is the data of node_failed: the error, and what the attempt had written.
	NodeFailedData struct {
		NodeOutputData
		Error      string     `json:"error,omitempty"`
		Class      ErrorClass `json:"class,omitempty"`
		DurationMS *int64     `json:"duration_ms,omitempty"` // of the last attempt only (WillRetry false)
		WillRetry  bool       `json:"will_retry,omitempty"`
	}
	// NodeSkippedData is the data of node_skipped.
	NodeSkippedData struct {
		Reason string `json:"reason,omitempty"`
	}
	// LoopIterationData is the data of loop_iteration_completed: the iteration is the event's attempt.
	LoopIterationData struct {
		NodeOutputData
		SessionID string `json:"session_id,omitempty"`
	}
	// ResumeFailedData is the data of resume_failed, recorded at the node a resume could not start.
	ResumeFailedData struct {
		Error string     `json:"error,omitempty"`
		Class ErrorClass `json:"class,omitempty"`
	}
	// GateAnswerData is the data of gate_resolved.
	GateAnswerData struct {
		Decision  GateDecision   `json:"decision"`
		By        string         `json:"by"`
		ByName    string         `json:"by_name,omitempty"` // By's display name, for messages
		Text      string         `json:"text"`
		Approvals []GateApproval `json:"approvals,omitempty"` // when several were required
		TimedOut  bool           `json:"timed_out,omitempty"`
		Via       string         `json:"via,omitempty"` // how the bot knew who By is (see RunCreatedData)
	}
	// GateApprovalData is the data of gate_approval.
	GateApprovalData struct {
		By     string `json:"by"`
		ByName string `json:"by_name,omitempty"` // By's display name, for messages
		Text   string `json:"text,omitempty"`
		Via    string `json:"via,omitempty"` // how the bot knew who By is (see RunCreatedData)
	}
	// GateRefusedData is the data of gate_answer_refused.
	GateRefusedData struct {
		By       string        `json:"by"`
		Decision GateDecision  `json:"decision"`
		Reason   RefusalReason `json:"reason"`
		Via      string        `json:"via,omitempty"` // how the bot knew who By is (see RunCreatedData)
	}
	// GateReplyData is the data of gate_reply_unclear.
	GateReplyData struct {
		By   string `json:"by"`
		Text string `json:"text"`
	}
	// CancelData is the data of run_cancelled.
	CancelData struct {
		By     string `json:"by"`
		ByName string `json:"by_name,omitempty"` // By's display name, for messages
		Reason string `json:"reason"`
		Via    string `json:"via,omitempty"` // how the bot knew who By is, when not from the platform itself
	}
)

// gate_requested and run_paused carry the Pause; run_failed carries the RunError; workspace_created
// carries the Workspace.

// Payload is the data of an event: it names the event type it is the data of, so that a type and
// its data are paired once, here, and every event is built by NewEvent.
type Payload interface{ EventType() EventType }

// NewEvent is the event recording p for run runID, at node ("" for an event of the whole run) and
// attempt (0 when the event counts none). at may be zero where the store stamps the time.
func NewEvent(runID, node string, attempt int, p Payload, at time.Time) Event {
	return Event{RunID: runID, Type: p.EventType(), NodeID: node, Attempt: attempt, Data: MustJSON(p), At: at}
}

// The event type of each payload.
func (RunCreatedData) EventType() EventType      { return EventRunCreated }
func (RunClaimedData) EventType() EventType      { return EventRunClaimed }
func (RunReleasedData) EventType() EventType     { return EventRunReleased }
func (RunRescuedData) EventType() EventType      { return EventRunRescued }
func (ResumeRequestedData) EventType() EventType { return EventResumeRequested }
func (RunCompletedData) EventType() EventType    { return EventRunCompleted }
func (GateRemindedData) EventType() EventType    { return EventGateReminded }
func (GateEscalatedData) EventType() EventType   { return EventGateEscalated }
func (NotifiedData) EventType() EventType        { return EventNotified }
func (SessionResetData) EventType() EventType    { return EventSessionReset }
func (NodeStartedData) EventType() EventType     { return EventNodeStarted }
func (NodeCompletedData) EventType() EventType   { return EventNodeCompleted }
func (NodeFailedData) EventType() EventType      { return EventNodeFailed }
func (NodeSkippedData) EventType() EventType     { return EventNodeSkipped }
func (LoopIterationData) EventType() EventType   { return EventLoopIteration }
func (ResumeFailedData) EventType() EventType    { return EventResumeFailed }
func (GateAnswerData) EventType() EventType      { return EventGateResolved }
func (GateApprovalData) EventType() EventType    { return EventGateApproval }
func (GateRefusedData) EventType() EventType     { return EventGateRefused }
func (GateReplyData) EventType() EventType       { return EventGateReply }
func (CancelData) EventType() EventType          { return EventRunCancelled }
func (RunError) EventType() EventType            { return EventRunFailed }
func (Workspace) EventType() EventType           { return EventWorkspace }

// EventType of a pause: a recovery pause is run_paused; a gate or a loop asks a person,
// gate_requested.
func (p Pause) EventType() EventType {
	if p.Kind == PauseRecovery {
		return EventRunPaused
	}
	return EventGateRequested
}

// EventTypes lists every event type, in the order of their constants.
var EventTypes = []EventType{
	EventRunCreated, EventRunClaimed, EventRunReleased, EventRunRescued, EventRunPaused,
	EventResumeRequested, EventResumeFailed, EventRunCompleted, EventRunFailed, EventRunCancelled,
	EventNodeStarted, EventNodeCompleted, EventNodeFailed, EventNodeSkipped, EventLoopIteration,
	EventGateRequested, EventGateResolved, EventSessionReset, EventGateApproval, EventGateRefused,
	EventGateReply, EventGateReminded, EventWorkspace, EventGateEscalated, EventNotified, EventAgentUsage,
	EventBudgetChanged,
}

// payloads holds a value of every payload type: NewPayload finds an event type's by EventType.
var payloads = []Payload{
	RunCreatedData{}, RunClaimedData{}, RunReleasedData{}, RunRescuedData{}, Pause{Kind: PauseRecovery},
	ResumeRequestedData{}, ResumeFailedData{}, RunCompletedData{}, RunError{}, CancelData{},
	NodeStartedData{}, NodeCompletedData{}, NodeFailedData{}, NodeSkippedData{}, LoopIterationData{},
	Pause{Kind: PauseApproval}, GateAnswerData{}, SessionResetData{}, GateApprovalData{}, GateRefusedData{},
	GateReplyData{}, GateRemindedData{}, Workspace{}, GateEscalatedData{}, NotifiedData{}, AgentUsageData{},
	BudgetChangedData{},
}

var payloadTypes = func() map[EventType]reflect.Type {
	m := make(map[EventType]reflect.Type, len(payloads))
	for _, p := range payloads {
		m[p.EventType()] = reflect.TypeOf(p)
	}
	return m
}()

// NewPayload returns a pointer to a zero value of t's payload type, to decode its data into; nil
// for a type this build does not know.
func (t EventType) NewPayload() any {
	if rt, ok := payloadTypes[t]; ok {
		return reflect.New(rt).Interface()
	}
	return nil
}

// Decode reads an event's data into its payload type T. Payloads are written by this code, so a
// bad one (or one of another type) reads as the zero value: a reader shows less rather than
// failing on history it cannot change.
func Decode[T any](e Event) T {
	var d T
	if len(e.Data) > 0 {
		if err := json.Unmarshal(e.Data, &d); err != nil {
			return *new(T)
		}
	}
	return d
}

// MustJSON encodes event payloads the code builds itself, which always encode.
func MustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic("db: encode event data: " + err.Error())
	}
	return b
}
