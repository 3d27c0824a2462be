package reporting

import (
	"slices"
	"strconv"
	"strings"
	"time"

	"threadflow/conversation"
	"threadflow/db"
	"threadflow/orchestrator/execution"
	"threadflow/workflow"
)

// Who is told, and how: the people a gate names, as its `notify` says, when it is asked, at its
// reminder and at its escalation; and the person who started a run, directly, when it is decided
// or ends after they left it. Every such message is owed with the transition that owes it, like
// the run's other messages; the courier records each delivery as a `notified` event. Only ids a
// workflow's YAML lists are ever mentioned (conversation.M): nothing a person types can ping.

// DefaultRequesterAway is how long after starting a run its requester is taken to have left it:
// a decision or an end that comes later, and that was not their own doing, is sent to them
// directly. Shorter runs end while their requester still watches the thread.
const DefaultRequesterAway = 10 * time.Minute

// What a notification is about (db.NotifiedData.About, the owed message's kind).
const (
	aboutGate       = "gate"
	aboutReminder   = "reminder"
	aboutEscalation = "escalation"
	aboutDecision   = "decision"
	aboutEnd        = "end"
)

// told are the people (ids and groups) of the run's platform that the gate p tells: its approvers,
// the admins when it lists @admins, and once it escalated (or with escalation, only) its
// escalate_to.
func (r *Reporter) told(run db.Run, p *db.Pause, escalation bool) []string {
	if p == nil || p.Gate == nil {
		return nil
	}
	g := p.Gate
	var list []string
	admins := false
	if !escalation {
		list, admins = append(list, g.Approvers...), g.Admins
	}
	if escalation || p.Escalated {
		list = append(list, g.EscalateTo...)
		admins = admins || g.EscalateAdmins
	}
	if admins {
		list = append(list, r.Admins...)
	}
	platform, _, _, _ := db.ParseConversationKey(run.ConversationID)
	var out []string
	for _, id := range list {
		if strings.HasPrefix(id, platform+":") && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// mentions is the line that pings people, or nothing.
func mentions(people []string) []conversation.Span {
	if len(people) == 0 {
		return nil
	}
	out := []conversation.Span{conversation.P("\n🔔 ")}
	for i, id := range people {
		if i > 0 {
			out = append(out, conversation.P(" "))
		}
		out = append(out, conversation.M(id))
	}
	return out
}

// gateTold is what telling the people of a gate owes, besides the thread message text they are
// mentioned in: with notify: mention, the spans that mention them (for that message); with notify:
// dm, a direct message to each linking to the gate's question.
func (r *Reporter) gateTold(run db.Run, p *db.Pause, about string, say conversation.Text) ([]conversation.Span, []db.Owed) {
	if p == nil || p.Gate == nil {
		return nil, nil
	}
	people := r.told(run, p, about == aboutEscalation)
	switch p.Gate.Notify {
	case db.NotifyMention:
		return mentions(people), nil
	case db.NotifyDM:
		if len(people) == 0 {
			return nil, nil
		}
		d := conversation.Direct{To: people, About: about, Link: refGate, Reply: conversation.Reply{Text: say}}
		return nil, []db.Owed{directOwed(gateKey(run.ID, p, "told", about), d)}
	}
	return nil, nil
}

// directOwed is an owed direct message: its row holds the whole conversation.Direct, which the
// courier reads (a DM is not posted with a key: nothing looks it up).
func directOwed(key string, d conversation.Direct) db.Owed {
	d.Reply.Key = ""
	return db.Owed{Kind: "direct", Key: key, Target: db.TargetDirect, Reply: db.MustJSON(d)}
}

// askedText is what a direct message about a gate says.
func askedText(run db.Run, p *db.Pause) conversation.Text {
	return conversation.T(conversation.P("⏸ Run "), conversation.C(run.ID), conversation.P(" of "), conversation.C(run.Workflow),
		conversation.P(" is waiting at gate "), conversation.C(p.Node), conversation.P(", and you may answer it."))
}

// requesterTold is the direct message to the run's requester about what happened to their run at
// when, by someone (by; "" for no person: the run ended by itself), unless they did it or it came
// before DefaultRequesterAway. A run a trigger started has no person to tell: its thread is told.
func (r *Reporter) requesterTold(run db.Run, key, about, by string, at time.Time, t conversation.Text) []db.Owed {
	if by == run.UserID || at.Sub(run.CreatedAt) < r.requesterAway() || strings.HasPrefix(run.UserID, workflow.RequesterPrefix) {
		return nil
	}
	t = conversation.T(conversation.P("Your run "), conversation.C(run.ID), conversation.P(" of "), conversation.C(run.Workflow),
		conversation.P(":\n")).Append(t...)
	d := conversation.Direct{To: []string{run.UserID}, About: about, Link: statusRef(run), Reply: conversation.Reply{Text: t}}
	return []db.Owed{directOwed(key, d)}
}

func (r *Reporter) requesterAway() time.Duration {
	if r.RequesterAway > 0 {
		return r.RequesterAway
	}
	return DefaultRequesterAway
}

func (r *Reporter) now() time.Time {
	if r.Now != nil {
		return r.Now()
	}
	return time.Now()
}

// transitionTold is what a transition that n reports owes people directly: the gate's approvers
// when it is asked (notify: dm), and the requester when their run ends after they left it (by
// itself, or cancelled by someone else).
func (r *Reporter) transitionTold(n execution.Notice) []db.Owed {
	run := n.Run
	switch n.Kind {
	case execution.NoticeGate:
		_, out := r.gateTold(run, run.Meta.Pause, aboutGate, askedText(run, run.Meta.Pause))
		return out
	case execution.NoticeCompleted, execution.NoticeFailed, execution.NoticeCancelled:
		if nested(run) {
			return nil // a child's end is its parent's business: the requester hears of the parent's
		}
		if n.Kind == execution.NoticeCancelled && n.By == "" {
			return nil // cancelled by a gate's answer or timer: the decision told them
		}
		msg, _ := noticeMessage(n, conversation.Capabilities{})
		if msg == nil {
			msg = conversation.T(conversation.P("it is " + stateOf(n) + "."))
		}
		at := run.FinishedAt
		if at.IsZero() {
			at = r.now()
		}
		return r.requesterTold(run, owedKey(run.ID, "requester", aboutEnd, stateOf(n), strconv.Itoa(run.Attempt)), aboutEnd, n.By, at, msg)
	}
	return nil
}
