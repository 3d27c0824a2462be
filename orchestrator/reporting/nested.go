package reporting

import (
	"threadflow/conversation"
	"threadflow/db"
	"threadflow/orchestrator/execution"
)

// A child run (started by a parent's `workflow:` node, db.Run.ParentRunID) lives in its parent's
// thread, nested: it has no announcement and no status message of its own, but one line in that
// thread ("↳ child run ID (workflow W, node N): running · ✓ a · ▶ b"), posted when it is created
// and edited in place as it runs, ends, is resumed or is cancelled with its parent, across
// attempts. Its ends (completed, failed, cancelled) are that line and nothing else: the parent's
// own messages say what they mean for the parent (its node's output, its failure naming the child
// and how to resume both), and its requester is told of the parent's end, not the child's. What
// needs a person is still said in full, in the parent's thread, marked as the child's: its gate
// questions (answered there by a reply, a button or a command, as any gate: a reply in the thread
// answers the newest run of the thread waiting at a gate) and its recovery pauses with their hint.
// Every one of these messages is owed through the outbox like any other, with the transition that
// owes it (the line with the child's creation, its ends with their transitions, a cascade's with
// the parent's cancel: db.ChildNotes), so a crash delays them and loses none.

// nested reports whether run is a child run, shown nested in its parent's thread.
func nested(run db.Run) bool { return run.ParentRunID != "" }

// Nested is what a new child run owes, written with it (db.NewRun.Owe): its line in its parent's
// thread, queued.
func (r *Reporter) Nested(child db.Run) []db.Owed { return []db.Owed{statusPost(child)} }

// ChildNotes is what a child run cancelled with its parent owes (db.ChildNotes), written in the
// parent's cancel: its line shows it cancelled.
func (r *Reporter) ChildNotes(child db.Run) []db.Owed {
	return []db.Owed{statusOwed(child, string(db.StatusCancelled), nil)}
}

// nestedText is a child run's line in its parent's thread: what it is, its state, and its nodes'.
func nestedText(run db.Run, state string, nodes []execution.NodeStatus) conversation.Text {
	t := conversation.T(conversation.P("↳ child run "), conversation.C(run.ID), conversation.P(" (workflow "), conversation.C(run.Workflow))
	if run.ParentNode != "" {
		t = t.Append(conversation.P(", node "), conversation.C(run.ParentNode))
	}
	t = t.Append(conversation.P("): "), conversation.B(state))
	if e := run.Meta.LastError; state == string(db.StatusFailed) && e != nil && e.Node != "" {
		t = t.Append(conversation.P(" at "), conversation.C(e.Node))
	}
	for _, n := range nodes {
		t = t.Append(conversation.P(" · " + stateIcon(n.State) + " " + n.ID))
	}
	return t
}

// nestedHeading marks a message a child run says in its parent's thread as the child's.
func nestedHeading(run db.Run) conversation.Text {
	t := conversation.T(conversation.P("↳ child run "), conversation.C(run.ID), conversation.P(" of run "), conversation.C(run.ParentRunID))
	if run.ParentNode != "" {
		t = t.Append(conversation.P(" (node "), conversation.C(run.ParentNode), conversation.P(")"))
	}
	return t.Append(conversation.P(":\n"))
}

// nestedEnd reports whether a notice of a child run is only its line: how it ended.
func nestedEnd(n execution.Notice) bool {
	if !nested(n.Run) {
		return false
	}
	switch n.Kind {
	case execution.NoticeCompleted, execution.NoticeFailed, execution.NoticeCancelled:
		return true
	}
	return false
}
