package db

import (
	"encoding/json"
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
		FreshWorkspace bool `json:"fresh_workspace,omitempty"`
	}
	// NoData is the data of events that carry none (run_completed, gate_reminder_sent): {}.
	NoData struct{}
	// SessionResetData is the data of session_reset: a node's provider session was dropped.
	SessionResetData struct {
		Provider string `json:"provider"`
		Reason   string `json:"reason"`
	}
	// NodeData is the data of the node events (node_started, node_completed, node_failed,
	// node_skipped, loop_iteration_completed) and of resume_failed.
	NodeData struct {
		Output      string     `json:"output,omitempty"`       // the inline value of the output
		OutputBytes int64      `json:"output_bytes,omitempty"` // size of the full output
		OutputPath  string     `json:"output_path,omitempty"`  // the file holding the full output
		Error       string     `json:"error,omitempty"`
		Class       ErrorClass `json:"class,omitempty"`
		Reason      string     `json:"reason,omitempty"`
		SessionID   string     `json:"session_id,omitempty"`
		DurationMS  *int64     `json:"duration_ms,omitempty"` // nil in events that predate it
		WillRetry   bool       `json:"will_retry,omitempty"`
	}
	// GateAnswerData is the data of gate_resolved.
	GateAnswerData struct {
		Decision  GateDecision   `json:"decision"`
		By        string         `json:"by"`
		ByName    string         `json:"by_name,omitempty"` // By's display name, for messages
		Text      string         `json:"text"`
		Approvals []GateApproval `json:"approvals,omitempty"` // when several were required
		TimedOut  bool           `json:"timed_out,omitempty"`
	}
	// GateApprovalData is the data of gate_approval.
	GateApprovalData struct {
		By     string `json:"by"`
		ByName string `json:"by_name,omitempty"` // By's display name, for messages
		Text   string `json:"text,omitempty"`
	}
	// GateRefusedData is the data of gate_answer_refused.
	GateRefusedData struct {
		By       string        `json:"by"`
		Decision GateDecision  `json:"decision"`
		Reason   RefusalReason `json:"reason"`
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
	}
)

// gate_requested and run_paused carry the Pause; run_failed carries the RunError; workspace_created
// carries the Workspace.

// EventTypes lists every event type, in the order of their constants.
var EventTypes = []EventType{
	EventRunCreated, EventRunClaimed, EventRunReleased, EventRunRescued, EventRunPaused,
	EventResumeRequested, EventResumeFailed, EventRunCompleted, EventRunFailed, EventRunCancelled,
	EventNodeStarted, EventNodeCompleted, EventNodeFailed, EventNodeSkipped, EventLoopIteration,
	EventGateRequested, EventGateResolved, EventSessionReset, EventGateApproval, EventGateRefused,
	EventGateReply, EventGateReminded, EventWorkspace,
}

// NewPayload returns a pointer to a zero value of t's payload type, to decode its data into; nil
// for a type this build does not know.
func (t EventType) NewPayload() any {
	switch t {
	case EventRunCreated:
		return new(RunCreatedData)
	case EventRunClaimed:
		return new(RunClaimedData)
	case EventRunReleased:
		return new(RunReleasedData)
	case EventRunRescued:
		return new(RunRescuedData)
	case EventRunPaused, EventGateRequested:
		return new(Pause)
	case EventResumeRequested:
		return new(ResumeRequestedData)
	case EventRunCompleted, EventGateReminded:
		return new(NoData)
	case EventRunFailed:
		return new(RunError)
	case EventRunCancelled:
		return new(CancelData)
	case EventResumeFailed, EventNodeStarted, EventNodeCompleted, EventNodeFailed, EventNodeSkipped, EventLoopIteration:
		return new(NodeData)
	case EventSessionReset:
		return new(SessionResetData)
	case EventGateResolved:
		return new(GateAnswerData)
	case EventGateApproval:
		return new(GateApprovalData)
	case EventGateRefused:
		return new(GateRefusedData)
	case EventGateReply:
		return new(GateReplyData)
	case EventWorkspace:
		return new(Workspace)
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
