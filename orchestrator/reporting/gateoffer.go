package reporting

import (
	"threadflow/conversation"
	"threadflow/db"
)

// GateOffer is what one person may answer at the gate a run waits at, by the gate's own rules:
// db.GateRefusal, the rule the store judges every answer by, so nobody is offered what would be
// refused. A gate's question is for everyone in its thread and offers every answer; what is said to
// one person (a refusal, the question about their unclear reply, the resume gate's prompt, a
// terminal's hint) offers only what that person may do.
type GateOffer struct {
	Run     db.Run
	User    string
	Approve db.RefusalReason // why User may not approve; "" when they may
	Reject  db.RefusalReason // why User may not reject; "" when they may
}

// MayApprove reports whether the person may approve.
func (o GateOffer) MayApprove() bool { return o.Approve == "" }

// MayReject reports whether the person may reject.
func (o GateOffer) MayReject() bool { return o.Reject == "" }

// Policy is the gate's rules, as frozen into its pause.
func (o GateOffer) Policy() db.GatePolicy {
	if p := o.Run.Meta.Pause; p != nil && p.Gate != nil {
		return *p.Gate
	}
	return db.GatePolicy{AllowSelfApproval: true}
}

// Approvers are the people the gate names that may approve in the person's place: every approver
// it lists but the person. Empty when the gate names nobody (anyone else may approve).
func (o GateOffer) Approvers() []string {
	var out []string
	for _, id := range o.Policy().Approvers {
		if id != o.User {
			out = append(out, id)
		}
	}
	return out
}

// whoMayApprove names who may approve for a person who may not: "someone other than you", or the
// gate's approvers.
func (o GateOffer) whoMayApprove() []conversation.Span {
	p := o.Policy()
	if !p.Restricted() {
		return []conversation.Span{conversation.P("someone other than you")}
	}
	p.Approvers = o.Approvers()
	if len(p.Approvers) == 0 && !p.Admins {
		return []conversation.Span{conversation.P("nobody else (the gate names only you)")}
	}
	return approverList(p)
}

// Instead says, to a person who may not approve, who may and what they may do themselves:
// reject, written as rejectCmd (the command of the surface they use), or nothing.
func (o GateOffer) Instead(rejectCmd string) conversation.Text {
	var t conversation.Text
	p := o.Policy()
	switch {
	case o.MayApprove():
		return nil
	case o.Approve == db.RefusedSelfApproval && p.Restricted():
		t = conversation.T(conversation.P("It needs an approval from someone other than you: ")).Append(o.whoMayApprove()...).Append(conversation.P("."))
	case o.Approve == db.RefusedSelfApproval:
		t = conversation.T(conversation.P("Someone other than you must approve it."))
	default:
		t = conversation.T(conversation.P("Only ")).Append(o.whoMayApprove()...).Append(conversation.P(" may answer it."))
	}
	if o.MayReject() && rejectCmd != "" {
		t = t.Append(conversation.P(" You may reject it: "), conversation.C(rejectCmd), conversation.P("."))
	}
	return t
}
