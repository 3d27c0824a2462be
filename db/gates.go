package db

import (
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"threadflow/platform"
)

// GateDecision is a person's answer to a paused gate.
type GateDecision string

// Gate decisions. Approve and answer resume the run; reject cancels it.
const (
	DecisionApprove GateDecision = "approve"
	DecisionReject  GateDecision = "reject"
	DecisionAnswer  GateDecision = "answer" // an interactive loop's feedback
)

// GateResolution is the input of Store.ResolveGate: one person's answer.
type GateResolution struct {
	RunID    string
	Node     string // the gate node the person answered; "" means the gate the run waits at
	Decision GateDecision
	By       string // platform-qualified user id
	Name     string // By's display name, recorded for messages only (bounded by the caller)
	Admin    bool   // By is in ADMIN_USER_IDS (the caller knows the configuration)
	// MemberOf are the groups (platform.People group entries) By was found in when acting: the
	// caller asks the platform, since membership changes and only the platform knows it.
	MemberOf []string
	Via      string // how the adapter knew who By is (conversation.ViaSignIn), for the audit; "" for the platform's word
	Text     string // comment, reason or answer
	// ReplySeq, when set, makes the answer carry the text of the gate_reply_unclear event with that
	// seq (the "Approve with this note" button); it must be a reply to the gate's current question.
	ReplySeq int64
	// Owe, when set, says what the answer owes the run's conversation, recorded in the answer's
	// transaction; it is not asked about an answer that is refused.
	Owe func(GateResult) []Owed
}

// GatePolicy says who may answer an approval gate: the workflow's `approval:` fields decode into
// it, and it is frozen into the pause when the gate is asked, so a running gate keeps the rules it
// was asked with. A new rule is a field here, with its JSON key, a check in GateRefusal, and its
// term in Plain (docs/contributing.md, "Add a gate option").
type GatePolicy struct {
	Approvers         platform.People `json:"approvers,omitempty"` // platform-qualified ids and groups; empty (and no Admins): anyone
	Admins            bool            `json:"admins,omitempty"`    // ADMIN_USER_IDS may answer too
	AllowSelfApproval bool            `json:"-"`                   // the run's requester may approve; stored as gatePolicyJSON says
	Required          int             `json:"required,omitempty"`  // distinct approvals needed; 0 means 1
	// Notify is how the approvers are told the gate waits (NotifyMention, NotifyDM); "" tells nobody
	// (notify: none, and gates frozen before notifications existed).
	Notify string `json:"notify,omitempty"`
	// EscalateTo are the people (ids, groups) the gate escalates to at Pause.EscalateAt: told as
	// Notify says and, from then on, allowed to answer; EscalateAdmins is its @admins.
	EscalateTo     platform.People `json:"escalate_to,omitempty"`
	EscalateAdmins bool            `json:"escalate_admins,omitempty"`
}

// How a gate tells its approvers it waits (gate option notify).
const (
	NotifyMention = "mention" // the gate's messages in the thread mention them
	NotifyDM      = "dm"      // each gets a direct message linking to the gate's message
	NotifyNone    = "none"    // nobody is told; stored as ""
)

// storedPolicy is GatePolicy without its JSON methods, to embed in gatePolicyJSON.
type storedPolicy GatePolicy

// gatePolicyJSON is a GatePolicy as stored. A gate that allows self approval, as most do, stores
// no key for it, so its bytes are those every release wrote. One that refuses it stores
// "allow_self_approval":false and also "no_self_approval":true, the key releases before this one
// wrote and read: a replica of the previous release, during a rolling update, still refuses the
// requester's approval. Reading takes allow_self_approval when present, else no_self_approval.
type gatePolicyJSON struct {
	storedPolicy
	AllowSelfApproval *bool `json:"allow_self_approval,omitempty"`
	NoSelfApproval    bool  `json:"no_self_approval,omitempty"` // the earlier releases' key
}

// MarshalJSON writes p as gatePolicyJSON.
func (p GatePolicy) MarshalJSON() ([]byte, error) {
	j := gatePolicyJSON{storedPolicy: storedPolicy(p)}
	if !p.AllowSelfApproval {
		j.AllowSelfApproval, j.NoSelfApproval = new(false), true
	}
	return json.Marshal(j)
}

// UnmarshalJSON reads gatePolicyJSON, as written by this release or an earlier one.
func (p *GatePolicy) UnmarshalJSON(b []byte) error {
	var j gatePolicyJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*p = GatePolicy(j.storedPolicy)
	p.AllowSelfApproval = !j.NoSelfApproval
	if j.AllowSelfApproval != nil {
		p.AllowSelfApproval = *j.AllowSelfApproval
	}
	return nil
}

// Plain reports whether p sets no rule: anyone allowed to use the bot answers alone, the requester
// included. A plain gate's pause stores no policy.
func (p GatePolicy) Plain() bool {
	return !p.Restricted() && p.AllowSelfApproval && p.Required <= 1 && p.Notify == "" && !p.Escalates()
}

// Escalates reports whether the gate names people to escalate to.
func (p *GatePolicy) Escalates() bool { return p != nil && (len(p.EscalateTo) > 0 || p.EscalateAdmins) }

// AllowsSelfApproval reports whether the run's requester may approve; with no policy, they may.
func (p *GatePolicy) AllowsSelfApproval() bool { return p == nil || p.AllowSelfApproval }

// RequiredApprovals is how many distinct people must approve.
func (p *GatePolicy) RequiredApprovals() int {
	if p == nil || p.Required < 1 {
		return 1
	}
	return p.Required
}

// Restricted reports whether only listed people may answer.
func (p *GatePolicy) Restricted() bool { return p != nil && (len(p.Approvers) > 0 || p.Admins) }

// Timeout actions of an approval gate (Pause.OnTimeout).
const (
	TimeoutReject  = "reject"
	TimeoutAbandon = "abandon"
)

// TimeoutActor is who answers a gate that timed out, in events and errors.
const TimeoutActor = "threadflow:timeout"

// WorkflowActor is who cancels a run that its own workflow cancelled (a cancel node), in events.
const WorkflowActor = "threadflow:workflow"

// RefusalReason says why an answer was refused; it is stored in gate_answer_refused events.
type RefusalReason string

// Refusal reasons.
const (
	RefusedNotApprover     RefusalReason = "not_an_approver"
	RefusedSelfApproval    RefusalReason = "self_approval"
	RefusedAlreadyApproved RefusalReason = "already_approved"
)

// ErrNotPermitted matches every refused answer (*GateRefusedError).
var ErrNotPermitted = errors.New("not permitted")

// ErrStaleReply: an answer quoted a reply that was not made at the gate's current question.
var ErrStaleReply = errors.New("the quoted reply does not belong to the gate's current question")

// GateRefusedError is returned when the person may not give the answer; nothing changed except that
// the refusal (not a repeated approval) was recorded as a gate_answer_refused event.
type GateRefusedError struct {
	RunID    string
	Node     string
	By       string
	Decision GateDecision
	Reason   RefusalReason
	Policy   GatePolicy // the gate's rules, to say who may answer
	Have     int        // RefusedAlreadyApproved: approvals so far
}

func (e *GateRefusedError) Error() string {
	return fmt.Sprintf("gate %s of run %s: %s may not %s (%s)", e.Node, e.RunID, e.By, e.Decision, e.Reason)
}

// Is makes GateRefusedError match ErrNotPermitted.
func (e *GateRefusedError) Is(target error) bool { return target == ErrNotPermitted }

// GateApproval is one approval of a gate that needs several.
type GateApproval struct {
	By   string    `json:"by"`
	Name string    `json:"name,omitempty"` // By's display name; absent before names were recorded
	Text string    `json:"text,omitempty"`
	At   time.Time `json:"at"`
}

// GateResult is what an answer did.
type GateResult struct {
	Run       Run // after the answer: queued or cancelled when Resolved, still paused otherwise
	Node      string
	Decision  GateDecision
	Resolved  bool           // false: an approval was counted and more are needed
	Approvals []GateApproval // approvals of the current question, this one included
	Required  int
	Text      string // the note, reason or answer the resolution carries
}

// GateState is what a store read about a gate, in the transaction that answers it.
type GateState struct {
	Run    Run
	Node   string  // the gate being answered
	AskSeq int64   // seq of the node's latest gate_requested; 0 if it was never asked
	After  []Event // the run's gate_approval and gate_resolved events of Node after AskSeq, in order
	Reply  *Event  // the event at GateResolution.ReplySeq, when one was given and exists
}

// GateVerdict is what JudgeGate decided: the events to append, the transition to make (Op is ""
// when the run stays where it is), and the answer for the caller. Err is returned to the caller
// after the events were committed.
type GateVerdict struct {
	Op     Op
	Events []Event
	Result GateResult
	Err    error
}

// JudgeGate decides an answer to a gate. It is the one place that decides who may answer, how many
// approvals open a gate, and what a late or stale answer gets; the engines only read GateState and
// apply the verdict in the same transaction.
func JudgeGate(st GateState, g GateResolution, now time.Time) GateVerdict {
	if first := firstResolution(st); first != nil {
		return GateVerdict{Err: first}
	}
	p := st.Run.Meta.Pause
	if st.Run.Status != StatusPaused || p == nil || !p.Kind.IsGate() || p.Node != st.Node {
		return GateVerdict{Err: notAtGate(st, g)}
	}
	text, err := answerText(st, g)
	if err != nil {
		return GateVerdict{Err: err}
	}
	approvals := approvalsOf(st.After)
	if reason := GateRefusal(st.Run, g, approvals); reason != "" {
		return refusedVerdict(st, g, p.Gate, reason, len(approvals), now)
	}
	res := GateResult{Run: st.Run, Node: st.Node, Decision: g.Decision, Required: p.Gate.RequiredApprovals(), Text: text}
	if g.Decision == DecisionApprove {
		approvals = append(approvals, GateApproval{By: g.By, Name: g.Name, Text: text, At: now})
		res.Approvals = approvals
		if len(approvals) < res.Required {
			return GateVerdict{Result: res, Events: []Event{gateEvent(st, GateApprovalData{By: g.By, ByName: g.Name, Text: text, Via: g.Via}, now)}}
		}
	}
	res.Resolved = true
	return resolve(st, g, res, now)
}

// resolve is the verdict that answers the gate for good.
func resolve(st GateState, g GateResolution, res GateResult, now time.Time) GateVerdict {
	data := GateAnswerData{Decision: g.Decision, By: g.By, ByName: g.Name, Text: res.Text, Via: g.Via}
	if res.Required > 1 {
		data.Approvals = res.Approvals
	}
	v := GateVerdict{Op: OpApprove, Result: res, Events: []Event{gateEvent(st, data, now)}}
	if g.Decision == DecisionReject {
		v.Op = OpReject
		v.Events = append(v.Events, gateEvent(st, CancelData{By: g.By, ByName: g.Name, Reason: res.Text}, now))
		v.Events[1].NodeID = ""
	}
	return v
}

// GateRefusal returns why g may not be given at the gate run waits at, or "" when it may: who may
// answer a gate, decided in one place. JudgeGate refuses answers by it, in the transaction that
// records them; the bot asks it too before offering a person a way to answer (a hint, a button), so
// nobody is offered what would be refused. approvals are the gate's approvals so far (nil when the
// caller does not know them: a repeated approval is then not caught here, but by JudgeGate).
func GateRefusal(run Run, g GateResolution, approvals []GateApproval) RefusalReason {
	var p *GatePolicy
	if run.Meta.Pause != nil {
		p = run.Meta.Pause.Gate
	}
	if p.Restricted() && !p.Approvers.Includes(g.By, g.MemberOf) && !(p.Admins && g.Admin) && !escalatedTo(run.Meta.Pause, g) {
		return RefusedNotApprover
	}
	if g.Decision != DecisionApprove {
		return ""
	}
	if !p.AllowsSelfApproval() && g.By == run.UserID {
		return RefusedSelfApproval
	}
	for _, a := range approvals {
		if a.By == g.By {
			return RefusedAlreadyApproved
		}
	}
	return ""
}

// escalatedTo reports whether the gate escalated to g's author: escalation adds people who may
// answer, it never takes anyone away.
func escalatedTo(p *Pause, g GateResolution) bool {
	if !p.Widened() {
		return false
	}
	return p.Gate.EscalateTo.Includes(g.By, g.MemberOf) || (p.Gate.EscalateAdmins && g.Admin)
}

// refusedVerdict records a refusal (a repeated approval is not recorded: it is no attempt to exceed one's
// rights) and returns it as the caller's error.
func refusedVerdict(st GateState, g GateResolution, p *GatePolicy, reason RefusalReason, have int, now time.Time) GateVerdict {
	e := &GateRefusedError{RunID: st.Run.ID, Node: st.Node, By: g.By, Decision: g.Decision, Reason: reason, Have: have}
	if p != nil {
		e.Policy = *p
	}
	v := GateVerdict{Err: e}
	if reason != RefusedAlreadyApproved {
		v.Events = []Event{gateEvent(st, GateRefusedData{By: g.By, Decision: g.Decision, Reason: reason, Via: g.Via}, now)}
	}
	return v
}

// answerText is the text the answer carries: its own, or the quoted reply's.
func answerText(st GateState, g GateResolution) (string, error) {
	if g.ReplySeq == 0 {
		return g.Text, nil
	}
	r := st.Reply
	if r == nil || r.Type != EventGateReply || r.NodeID != st.Node || r.Seq <= st.AskSeq {
		return "", fmt.Errorf("run %s, reply %d: %w", st.Run.ID, g.ReplySeq, ErrStaleReply)
	}
	var d GateReplyData
	if err := json.Unmarshal(r.Data, &d); err != nil {
		return "", fmt.Errorf("run %s, reply %d: stored reply is not valid: %w", st.Run.ID, g.ReplySeq, err)
	}
	return d.Text, nil
}

// firstResolution returns a *GateResolvedError when the gate's current question was answered.
func firstResolution(st GateState) error {
	for _, e := range st.After {
		if e.Type != EventGateResolved {
			continue
		}
		d := Decode[GateAnswerData](e) // written by JudgeGate; a bad payload still proves an answer
		return &GateResolvedError{RunID: st.Run.ID, Node: st.Node, Decision: d.Decision, By: d.By, ByName: d.ByName, At: e.At}
	}
	return nil
}

// notAtGate explains an answer to a run that is not waiting at the gate.
func notAtGate(st GateState, g GateResolution) error {
	te := &TransitionError{RunID: st.Run.ID, Op: OpApprove, Found: st.Run.Status}
	if g.Decision == DecisionReject {
		te.Op = OpReject
	}
	p := st.Run.Meta.Pause
	switch {
	case st.Run.Status != StatusPaused:
		return te
	case p == nil || !p.Kind.IsGate():
		return fmt.Errorf("run %s is paused for recovery, not at a gate; resume it instead: %w", st.Run.ID, te)
	}
	return fmt.Errorf("run %s is not waiting at gate %q but at %q: %w", st.Run.ID, st.Node, p.Node, te)
}

// approvalsOf lists the gate_approval events.
func approvalsOf(events []Event) []GateApproval {
	var out []GateApproval
	for _, e := range events {
		if e.Type != EventGateApproval {
			continue
		}
		d := Decode[GateApprovalData](e)
		out = append(out, GateApproval{By: d.By, Name: d.ByName, Text: d.Text, At: e.At})
	}
	return out
}

// gateEvent builds an event of the gate's node.
func gateEvent(st GateState, p Payload, at time.Time) Event {
	return NewEvent(st.Run.ID, st.Node, 0, p, at)
}

// AskedGate is the gate node the run waits at, or "" when it waits at none.
func AskedGate(r Run) string {
	if p := r.Meta.Pause; r.Status == StatusPaused && p != nil && p.Kind.IsGate() {
		return p.Node
	}
	return ""
}

// Check refuses a resolution no engine could record.
func (g GateResolution) Check() error {
	switch g.Decision {
	case DecisionApprove, DecisionReject, DecisionAnswer:
	default:
		return fmt.Errorf("resolve gate of run %s: unknown decision %q; use approve, reject or answer", g.RunID, g.Decision)
	}
	if g.By == "" {
		return fmt.Errorf("resolve gate of run %s: the answer has no author", g.RunID)
	}
	return nil
}
