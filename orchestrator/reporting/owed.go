package reporting

import (
	"encoding/json"
	"strconv"
	"time"

	"threadflow/conversation"
	"threadflow/db"
	"threadflow/orchestrator/execution"
)

// What a run owes its conversation is decided here, once: every message about a run is a row of
// the outbox (db.Owed), written with the state change that owes it and posted by the Courier.
// Each is named for good by a key built from what it is about (the run, its attempt, the gate's
// node and the instant it was asked), so writing it twice records it once and posting it twice
// posts it once (conversation.Reply.Key).

// Message kinds recorded in the run's messages (db.MessageRef), so any replica, also after a
// restart, edits the run's live status message and settles its gate question.
const (
	refStatus  = "status"
	refGate    = "gate"
	refAskBack = "ask_back:" // + the seq of the reply asked about
)

// owedKey names one message a run owes (db.OwedKey).
func owedKey(runID string, parts ...string) string { return db.OwedKey(runID, parts...) }

// instant names a moment in a key (a gate's Since): unique per ask, stable in the run's meta.
func instant(t time.Time) string { return strconv.FormatInt(t.UnixMicro(), 10) }

// owed is one owed message. The Reply is stored rendered, so every replica posts the same thing;
// an edit carries no key (only posts are keyed).
func owed(kind, key string, target db.OwedTarget, ref string, rep conversation.Reply) db.Owed {
	if target != db.TargetEdit {
		rep.Key = key
	}
	b, err := json.Marshal(rep)
	if err != nil {
		panic("orchestrator: encode reply: " + err.Error()) // spans, buttons and strings always encode
	}
	return db.Owed{Kind: kind, Key: key, Target: target, Ref: ref, Reply: b}
}

// statusRef is the message kind of the run's live status message. A resumed run gets a fresh one
// (the old one may be far up the thread), so each attempt has its own.
func statusRef(run db.Run) string {
	if run.Attempt == 0 || nested(run) { // a child's line is edited in place (nested.go)
		return refStatus
	}
	return refStatus + "." + strconv.Itoa(run.Attempt)
}

// statusPost is the run's live status message as it is first posted, queued: with the announcement,
// and again on a resume.
func statusPost(run db.Run) db.Owed {
	return owed("status", owedKey(run.ID, statusRef(run)), db.TargetLive, statusRef(run),
		conversation.Reply{Text: statusText(run, string(db.StatusQueued), nil)})
}

// statusOwed is the edit of the run's live status message to what state and nodes show: one row
// per status message whose latest content wins, so a burst of progress is one edit. A child's line
// is posted by it when it is not yet (nested.go).
func statusOwed(run db.Run, state string, nodes []execution.NodeStatus) db.Owed {
	target := db.TargetEdit
	if nested(run) {
		target = db.TargetLive
	}
	o := owed("status", owedKey(run.ID, statusRef(run), "edit"), target, statusRef(run),
		conversation.Reply{Text: statusText(run, state, nodes)})
	o.Replace = true
	return o
}

// announceOwed is what a new run owes: the root message that opens its thread (the run's
// conversation from then on) and its live status message in it. They are written with the run, so
// the announcement names a run that exists.
func announceOwed(run db.Run, by conversation.Person) []db.Owed {
	root := conversation.T(conversation.P("▶ "), conversation.C(run.Workflow), conversation.P(" - run "), conversation.C(run.ID),
		conversation.P(" by "), by.Span())
	return []db.Owed{
		owed("announce", owedKey(run.ID, "announce"), db.TargetOpen, "", conversation.Reply{Text: root}),
		statusPost(run),
	}
}

// noticeOwed is what a notice owes the run's conversation, rendered for a platform with caps: the
// status message as the notice leaves the run, and the notice's own message, ending with tell
// (the mentions of the people a gate tells).
func noticeOwed(n execution.Notice, caps conversation.Capabilities, tell ...conversation.Span) []db.Owed {
	run := n.Run
	switch n.Kind {
	case execution.NoticeProgress:
		return []db.Owed{statusOwed(run, string(db.StatusRunning), n.Nodes)}
	case execution.NoticeNote:
		key := n.Key
		if key == "" {
			key = owedKey(run.ID, "note", db.NewToken()) // a remark owed once, whenever it is said
		}
		return []db.Owed{owed("note", key, db.TargetThread, "", conversation.Reply{Text: n.Text})}
	}
	out := []db.Owed{statusOwed(run, stateOf(n), n.Nodes)}
	if nestedEnd(n) {
		return out
	}
	msg, buttons := noticeMessage(n, caps)
	if msg == nil {
		return out
	}
	msg = msg.Append(tell...)
	kind, ref := string(n.Kind), ""
	switch n.Kind {
	case execution.NoticeGate:
		ref = refGate
	case execution.NoticeCancelled:
		kind = "cancelled"
	}
	return append(out, owed(kind, noticeKey(n), db.TargetThread, ref, conversation.Reply{Text: msg, Buttons: buttons}))
}

// noticeKey names a notice's message: a gate or a pause by when it was asked, a failure by the
// attempt that failed, the ends of a run once.
func noticeKey(n execution.Notice) string {
	run := n.Run
	switch p := run.Meta.Pause; {
	case n.Kind == execution.NoticeGate && p != nil:
		return owedKey(run.ID, "gate", p.Node, instant(p.Since))
	case n.Kind == execution.NoticePaused && p != nil:
		return owedKey(run.ID, "paused", instant(p.Since))
	case n.Kind == execution.NoticeFailed:
		return owedKey(run.ID, "failed", strconv.Itoa(run.Attempt), strconv.Itoa(run.Recoveries))
	}
	return owedKey(run.ID, string(n.Kind))
}

// gateKey names what is said about the gate p of a run: "resolved", "reminder", ...
func gateKey(runID string, p *db.Pause, what ...string) string {
	parts := []string{"gate", "", ""}
	if p != nil {
		parts[1], parts[2] = p.Node, instant(p.Since)
	}
	return owedKey(runID, append(parts, what...)...)
}

// resolvedOwed settles the gate p of a run with t: the question and every ask-back about an unclear
// reply show the decision without their buttons (nobody clicks a stale choice), and the thread is
// told.
func resolvedOwed(runID string, p *db.Pause, askBacks []string, t conversation.Text) []db.Owed {
	out := []db.Owed{owed("resolved", gateKey(runID, p, "resolved", "question"), db.TargetEdit, refGate, conversation.Reply{Text: t})}
	for _, kind := range askBacks {
		out = append(out, owed("resolved", gateKey(runID, p, "resolved", kind), db.TargetEdit, kind, conversation.Reply{Text: t}))
	}
	return append(out, owed("resolved", gateKey(runID, p, "resolved"), db.TargetThread, "", conversation.Reply{Text: t}))
}

// resumedOwed is what a resume owes: the note that it resumes and a fresh status message.
func resumedOwed(run db.Run, note conversation.Text) []db.Owed {
	if nested(run) { // its line says it is queued again
		return []db.Owed{statusOwed(run, string(db.StatusQueued), nil)}
	}
	return []db.Owed{
		owed("note", owedKey(run.ID, "resumed", strconv.Itoa(run.Attempt)), db.TargetThread, "", conversation.Reply{Text: note}),
		statusPost(run),
	}
}

func stateOf(n execution.Notice) string {
	switch n.Kind {
	case execution.NoticeCompleted:
		return string(db.StatusCompleted)
	case execution.NoticeFailed:
		return string(db.StatusFailed)
	case execution.NoticeGate, execution.NoticePaused:
		return string(db.StatusPaused)
	case execution.NoticeCancelled:
		return string(db.StatusCancelled)
	}
	return string(db.StatusRunning)
}
