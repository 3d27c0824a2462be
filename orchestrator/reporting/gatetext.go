package reporting

import (
	"fmt"
	"strings"
	"time"

	"threadflow/commands"
	"threadflow/conversation"
	"threadflow/db"
	"threadflow/orchestrator/execution"
)

// quoteRunes is how much of an unclear reply the bot quotes back.
const quoteRunes = 300

// gateMessage is the question a gate posts in the run's thread, with the ways to answer that work on
// the platform it is posted to.
func gateMessage(run db.Run, caps conversation.Capabilities) (conversation.Text, []conversation.Button) {
	p := run.Meta.Pause
	if p == nil {
		p = &db.Pause{}
	}
	t := conversation.T(conversation.P("⏸ Run "), conversation.C(run.ID), conversation.P(" is waiting at "), conversation.C(p.Node), conversation.P("."))
	if p.Message != "" {
		t = t.Append(conversation.P("\n"), conversation.O(p.Message))
	}
	t = t.Append(gateRules(run, p)...)
	t = t.Append(howToAnswer(run, p, caps)...)
	if !caps.Buttons && !caps.CommandsInThreads {
		return t, nil
	}
	approve, reject := cmd(commands.KindApprove, run.ID), cmd(commands.KindReject, run.ID)
	return t, []conversation.Button{
		{Label: "Approve", Command: approve, Style: conversation.StylePrimary},
		{Label: "Reject", Command: reject, Style: conversation.StyleDanger},
	}
}

// gateRules says who may answer and when the gate stops waiting, when the gate says so.
func gateRules(run db.Run, p *db.Pause) []conversation.Span {
	var out []conversation.Span
	if g := p.Gate; g.Restricted() {
		out = append(out, conversation.P("\nWho may answer: "))
		out = append(out, approverList(*g)...)
		out = append(out, conversation.P("."))
	}
	if n := p.Gate.RequiredApprovals(); n > 1 {
		out = append(out, conversation.P(fmt.Sprintf("\nIt needs %d approvals from different people; one rejection rejects it.", n)))
	}
	if !p.Gate.AllowsSelfApproval() {
		out = append(out, conversation.P("\nThe requester ("), Requester(run).Span(), conversation.P(") may not approve it, only reject it."))
	}
	if !p.DueAt.IsZero() {
		out = append(out, conversation.P(fmt.Sprintf("\n⏳ If nobody answers by %s (%s after it was asked), it is %s.",
			clock(p.DueAt), db.ShortDuration(p.DueAt.Sub(p.Since)), timeoutOutcome(p.OnTimeout))))
	}
	return out
}

// howToAnswer lists the ways to answer that work where the question is posted: Slack does not take
// slash commands in threads, a terminal has neither threads nor buttons.
func howToAnswer(run db.Run, p *db.Pause, caps conversation.Capabilities) []conversation.Span {
	where := "reply in this thread"
	if !caps.Threads {
		where = "reply here"
	}
	var out []conversation.Span
	if p.Kind == db.PauseLoop {
		out = append(out, conversation.P("\nTo answer, "+where+" with feedback for the next round; a bare "), conversation.C("yes"),
			conversation.P(" ends the loop and a bare "), conversation.C("no"), conversation.P(" stops the run."))
	} else {
		out = append(out, conversation.P("\nTo answer, "+where+" with a clear yes or no, and a note after a comma: "),
			conversation.C("lgtm, ship it"), conversation.P(" or "), conversation.C("no, fix the tests first"), conversation.P("."))
	}
	if caps.Buttons {
		out = append(out, conversation.P(" Or click Approve or Reject."))
	}
	if caps.CommandsInThreads || !caps.Threads {
		out = append(out, conversation.P(" Or type "), conversation.C(cmd(commands.KindApprove, run.ID)+" [note]"), conversation.P(" or "),
			conversation.C(cmd(commands.KindReject, run.ID)+" [reason]"), conversation.P("."))
	}
	return out
}

// approverList names who may answer a restricted gate.
func approverList(g db.GatePolicy) []conversation.Span {
	var out []conversation.Span
	for i, id := range g.Approvers {
		if i > 0 {
			out = append(out, conversation.P(", "))
		}
		out = append(out, conversation.U(id))
	}
	if g.Admins {
		if len(g.Approvers) > 0 {
			out = append(out, conversation.P(" and "))
		}
		out = append(out, conversation.P("the admins (ADMIN_USER_IDS)"))
	}
	return out
}

func timeoutOutcome(onTimeout string) string {
	if onTimeout == db.TimeoutAbandon {
		return "abandoned"
	}
	return "rejected"
}

// clock writes a time for people in every time zone.
func clock(t time.Time) string { return t.UTC().Format("2006-01-02 15:04 UTC") }

// GateDecisionText says how a gate was answered for good, with the note or reason.
func GateDecisionText(res db.GateResult, user conversation.Person) conversation.Text {
	verb := map[db.GateDecision]string{db.DecisionApprove: "✅ Approved", db.DecisionReject: "🛑 Rejected", db.DecisionAnswer: "💬 Answered"}[res.Decision]
	t := conversation.T(conversation.P(verb + " by "))
	t = t.Append(approversOf(res, user)...)
	t = t.Append(conversation.P(": gate "), conversation.C(res.Node), conversation.P(" of run "), conversation.C(res.Run.ID))
	if res.Text != "" && res.Decision != db.DecisionAnswer {
		label := map[db.GateDecision]string{db.DecisionApprove: " with note: ", db.DecisionReject: " with reason: "}[res.Decision]
		t = t.Append(conversation.P(label), conversation.U(conversation.Preview(res.Text, quoteRunes)))
	}
	if res.Decision == db.DecisionReject {
		return t.Append(conversation.P(". The run is cancelled."))
	}
	return t.Append(conversation.P(". The run continues."))
}

// approversOf names who approved: everyone who did when several approvals were required.
func approversOf(res db.GateResult, user conversation.Person) []conversation.Span {
	if res.Decision != db.DecisionApprove || len(res.Approvals) < 2 {
		return []conversation.Span{user.Span()}
	}
	var out []conversation.Span
	for i, a := range res.Approvals {
		switch {
		case i == len(res.Approvals)-1:
			out = append(out, conversation.P(" and "))
		case i > 0:
			out = append(out, conversation.P(", "))
		}
		out = append(out, conversation.Person{ID: a.By, Name: a.Name}.Span())
	}
	return out
}

// ApprovalCountedText says an approval was counted and how many more the gate needs.
func ApprovalCountedText(res db.GateResult, user conversation.Person) conversation.Text {
	more := res.Required - len(res.Approvals)
	t := conversation.T(conversation.P("👍 Approved by "), user.Span(),
		conversation.P(fmt.Sprintf(" (%d of %d approvals): gate ", len(res.Approvals), res.Required)), conversation.C(res.Node),
		conversation.P(" of run "), conversation.C(res.Run.ID), conversation.P(fmt.Sprintf(" waits for %d more %s from someone else.", more, plural(more, "approval"))))
	if res.Text != "" {
		t = t.Append(conversation.P(" Note: "), conversation.U(conversation.Preview(res.Text, quoteRunes)))
	}
	return t
}

func plural(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// GateRefusalText tells a person why their answer changed nothing, and what they may do instead
// (offer); in a terminal, where one person may play several, it also says how to talk as someone
// else.
func GateRefusalText(re *db.GateRefusedError, offer GateOffer) conversation.Text {
	t := refusalReason(re, offer)
	if strings.HasPrefix(re.By, "console:") && re.Reason != db.RefusedAlreadyApproved {
		t = t.Append(conversation.P(" In a terminal, answer as someone else with "), conversation.C("--user NAME"),
			conversation.P(" ("), conversation.C("bot chat --user NAME ..."), conversation.P(" or "),
			conversation.C("bot workflow approve --user NAME "+re.RunID), conversation.P(")."))
	}
	return t
}

func refusalReason(re *db.GateRefusedError, offer GateOffer) conversation.Text {
	gate := []conversation.Span{conversation.P("gate "), conversation.C(re.Node), conversation.P(" of run "), conversation.C(re.RunID)}
	switch re.Reason {
	case db.RefusedSelfApproval:
		t := conversation.T(conversation.P("You started this run, and ")).Append(gate...)
		t = t.Append(conversation.P(" does not allow self-approval. Nothing was changed. "))
		return t.Append(offer.Instead(cmd(commands.KindReject, re.RunID) + " [reason]")...)
	case db.RefusedAlreadyApproved:
		more := re.Policy.RequiredApprovals() - re.Have
		t := conversation.T(conversation.P("You already approved ")).Append(gate...)
		return t.Append(conversation.P(fmt.Sprintf("; it needs %d more %s from someone else. Nothing was changed.", more, plural(more, "approval"))))
	}
	t := conversation.T(conversation.P("You may not answer ")).Append(gate...)
	t = t.Append(conversation.P(": only "))
	t = t.Append(approverList(re.Policy)...)
	return t.Append(conversation.P(" may. Nothing was changed."))
}

// AskBackMessage answers a reply that was neither a clear yes nor a clear no: what could not be
// decided, the reply quoted, and buttons that answer with it, as far as the person who wrote it may
// answer (offer): a requester who may not approve is offered Reject only, and told who may approve.
func AskBackMessage(run db.Run, text, why string, seq int64, offer GateOffer) (conversation.Text, []conversation.Button) {
	node := run.Meta.Pause.Node
	t := conversation.T(conversation.P("🤔 I could not tell whether that approves or rejects "), conversation.C(node),
		conversation.P(" of run "), conversation.C(run.ID), conversation.P(": "+why+". Nothing was changed.\nYou said: "),
		conversation.U(conversation.Preview(text, quoteRunes)), conversation.P("\n"))
	approve := conversation.Button{Label: "Approve with this note", Style: conversation.StylePrimary,
		Command: commands.Command{Kind: commands.KindApprove, RunID: run.ID, Reply: seq}.String()}
	reject := conversation.Button{Label: "Reject with this reason", Style: conversation.StyleDanger,
		Command: commands.Command{Kind: commands.KindReject, RunID: run.ID, Reply: seq}.String()}
	switch {
	case offer.MayApprove() && offer.MayReject():
		t = t.Append(conversation.P("Reply again with a clear yes or no (a note may follow after a comma), or use the buttons to answer with these words as they are."))
		return t, []conversation.Button{approve, reject}
	case offer.MayReject():
		t = t.Append(conversation.P("Reply again with a clear no (a reason may follow after a comma), or use the button to reject with these words as they are. "))
		return t.Append(offer.Instead("")...), []conversation.Button{reject}
	}
	return t.Append(offer.Instead("")...), nil
}

// ReminderText is the one reminder of a gate nobody answered yet.
func ReminderText(run db.Run, p db.Pause, now time.Time) conversation.Text {
	t := conversation.T(conversation.P("⏰ Reminder: run "), conversation.C(run.ID), conversation.P(" of "), conversation.C(run.Workflow),
		conversation.P(" is still waiting at "), conversation.C(p.Node), conversation.P(", asked "+Age(now.Sub(p.Since))+" ago."))
	if !p.DueAt.IsZero() {
		t = t.Append(conversation.P(fmt.Sprintf(" If nobody answers by %s, it is %s.", clock(p.DueAt), timeoutOutcome(p.OnTimeout))))
	}
	return t
}

// EscalationText says a gate escalated, and who may answer it now.
func EscalationText(run db.Run, p db.Pause) conversation.Text {
	t := conversation.T(conversation.P("⏫ Gate "), conversation.C(p.Node), conversation.P(" of run "), conversation.C(run.ID),
		conversation.P(" is still waiting after "+db.ShortDuration(p.EscalateAt.Sub(p.Since))+", so it is escalated: "))
	if p.Gate != nil {
		t = t.Append(approverList(db.GatePolicy{Approvers: p.Gate.EscalateTo, Admins: p.Gate.EscalateAdmins})...)
	}
	return t.Append(conversation.P(" may answer it too."))
}

// TimeoutText says a gate timed out and what that did to the run.
func TimeoutText(run db.Run, p db.Pause) conversation.Text {
	what := "The gate is rejected and the run is cancelled."
	if p.OnTimeout == db.TimeoutAbandon {
		what = "The run is abandoned."
	}
	return conversation.T(conversation.P("⌛ Gate "), conversation.C(p.Node), conversation.P(" of run "), conversation.C(run.ID),
		conversation.P(" timed out: nobody answered within "+db.ShortDuration(p.DueAt.Sub(p.Since))+". "+what))
}

// AnsweredBy names who answered first, for a late answer: a person, or the gate's timeout.
func AnsweredBy(by conversation.Person) []conversation.Span {
	if by.ID == db.TimeoutActor {
		return []conversation.Span{conversation.P("the timeout (nobody answered in time)")}
	}
	return []conversation.Span{by.Span()}
}

// gateAnswers lists who answered the run's gates, when, and with which note or reason, the gates'
// escalations and who was told, for `/workflow status`.
func gateAnswers(events []db.Event, now time.Time) []conversation.Span {
	var out []conversation.Span
	for _, e := range events {
		var line string
		var d db.GateAnswerData
		switch e.Type {
		case db.EventGateApproval:
			a := db.Decode[db.GateApprovalData](e)
			d = db.GateAnswerData{By: a.By, ByName: a.ByName, Text: a.Text}
			line = "👍 approved by "
		case db.EventGateResolved:
			d = db.Decode[db.GateAnswerData](e)
			line = map[db.GateDecision]string{db.DecisionApprove: "✅ approved by ", db.DecisionReject: "🛑 rejected by ", db.DecisionAnswer: "💬 answered by "}[d.Decision]
		case db.EventGateEscalated:
			out = append(out, conversation.P("• gate "), conversation.C(e.NodeID), conversation.P(": ⏫ escalated "+Age(now.Sub(e.At))+" ago; "),
				conversation.U(execution.Escalated(db.Decode[db.GateEscalatedData](e))), conversation.P(" may answer too\n"))
			continue
		case db.EventNotified:
			what, note := execution.Told(db.Decode[db.NotifiedData](e))
			out = append(out, conversation.P("• 🔔 "), conversation.U(what), conversation.P(" "+Age(now.Sub(e.At))+" ago"))
			if note != "" {
				out = append(out, conversation.P(" ("), conversation.U(note), conversation.P(")"))
			}
			out = append(out, conversation.P("\n"))
			continue
		default:
			continue
		}
		out = append(out, conversation.P("• gate "), conversation.C(e.NodeID), conversation.P(": "))
		if d.TimedOut {
			out = append(out, conversation.P("⌛ timed out "+Age(now.Sub(e.At))+" ago"))
		} else {
			out = append(out, conversation.P(line), conversation.Person{ID: d.By, Name: d.ByName}.Span(), conversation.P(" "+Age(now.Sub(e.At))+" ago"))
		}
		if d.Text != "" && d.Decision != db.DecisionAnswer {
			out = append(out, conversation.P(": "), conversation.U(conversation.Preview(d.Text, quoteRunes)))
		}
		out = append(out, conversation.P("\n"))
	}
	return out
}

// Requester is the person who started r, as recorded when it was created.
func Requester(r db.Run) conversation.Person {
	return conversation.Person{ID: r.UserID, Name: r.UserName}
}
