package reporting

import (
	"fmt"

	"threadflow/commands"
	"threadflow/conversation"
	"threadflow/db"
	"threadflow/orchestrator/execution"
)

// statusText is the live status message of a run: its state and every node's state.
func statusText(run db.Run, state string, nodes []execution.NodeStatus) conversation.Text {
	if nested(run) {
		return nestedText(run, state, nodes)
	}
	t := conversation.T(conversation.P("Status of run "), conversation.C(run.ID), conversation.P(": "), conversation.B(state))
	for _, n := range nodes {
		line := fmt.Sprintf("\n%s %s", stateIcon(n.State), n.ID)
		if n.Attempt > 1 {
			line += fmt.Sprintf(" (attempt %d)", n.Attempt)
		}
		if n.Duration > 0 {
			line += " " + execution.FormatDuration(n.Duration)
		}
		t = t.Append(conversation.P(line))
	}
	return t
}

// noticeMessage renders a notice as the message posted in the run's thread, with its buttons, for
// a platform with the given capabilities.
func noticeMessage(n execution.Notice, caps conversation.Capabilities) (conversation.Text, []conversation.Button) {
	t, buttons := noticeText(n, caps)
	if n.Usage != nil && t != nil {
		t = t.Append(conversation.P("\nAI usage: " + UsageText(*n.Usage)))
	}
	if nested(n.Run) && t != nil && n.Kind != execution.NoticeNote {
		t = append(nestedHeading(n.Run), t...)
	}
	return t, buttons
}

func noticeText(n execution.Notice, caps conversation.Capabilities) (conversation.Text, []conversation.Button) {
	run := n.Run
	switch n.Kind {
	case execution.NoticeGate:
		return gateMessage(run, caps)
	case execution.NoticeCompleted:
		t := conversation.T(conversation.P("✅ Run "), conversation.C(run.ID), conversation.P(" of "), conversation.C(run.Workflow), conversation.P(" completed."))
		if run.Meta.Output != "" {
			t = t.Append(conversation.P("\n"), conversation.O(run.Meta.Output))
		}
		return t, nil
	case execution.NoticeFailed:
		return failedMessage(run)
	case execution.NoticePaused:
		return recoveryMessage(run)
	case execution.NoticeCancelled:
		return n.Text, nil
	}
	return nil, nil
}

func cmd(k commands.Kind, id string) string { return commands.Command{Kind: k, RunID: id}.String() }

func failedMessage(run db.Run) (conversation.Text, []conversation.Button) {
	t := conversation.T(conversation.P("❌ Run "), conversation.C(run.ID), conversation.P(" of "), conversation.C(run.Workflow), conversation.P(" failed"))
	if e := run.Meta.LastError; e != nil {
		if e.Node != "" {
			t = t.Append(conversation.P(" at node "), conversation.C(e.Node))
		}
		t = t.Append(conversation.P(":\n"), conversation.O(e.Message))
	}
	return nextActions(t, run)
}

func recoveryMessage(run db.Run) (conversation.Text, []conversation.Button) {
	if p := run.Meta.Pause; p != nil && p.WorkspaceLost {
		return lostMessage(run, p)
	}
	t := conversation.T(conversation.P("⏸ Run "), conversation.C(run.ID), conversation.P(" could not continue and is paused; nothing was lost."))
	if p := run.Meta.Pause; p != nil {
		t = t.Append(conversation.P("\n"), conversation.O(p.Error))
		if p.ResumeHint != "" {
			t = t.Append(conversation.P("\nTo continue: "), conversation.O(p.ResumeHint))
		}
	}
	if p := run.Meta.Pause; p != nil && p.WorkspaceUnreachable {
		return unreachableActions(t, run)
	}
	return nextActions(t, run)
}

// unreachableActions are the next actions of a run whose WORKSPACE_REMOTE did not answer: resume
// once it does, or run it again in a fresh workspace rather than wait.
func unreachableActions(t conversation.Text, run db.Run) (conversation.Text, []conversation.Button) {
	resume, abandon := cmd(commands.KindResume, run.ID), cmd(commands.KindAbandon, run.ID)
	fresh := commands.Command{Kind: commands.KindResume, RunID: run.ID, FreshWorkspace: true}.String()
	t = t.Append(conversation.P("\nNext: "), conversation.C(resume), conversation.P(" tries the remote again; "), conversation.C(fresh),
		conversation.P(" runs it again from its first node in a fresh workspace; "), conversation.C(abandon), conversation.P(" discards it."))
	return t, []conversation.Button{
		{Label: "Resume", Command: resume, Style: conversation.StylePrimary},
		{Label: "Run again in a fresh workspace", Command: fresh},
		{Label: "Abandon", Command: abandon, Style: conversation.StyleDanger},
	}
}

// lostMessage is the pause of a run whose workspace is lost: no plain resume can continue it, so
// the next actions are running it again in a fresh workspace, or discarding it.
func lostMessage(run db.Run, p *db.Pause) (conversation.Text, []conversation.Button) {
	fresh := commands.Command{Kind: commands.KindResume, RunID: run.ID, FreshWorkspace: true}.String()
	abandon := cmd(commands.KindAbandon, run.ID)
	t := conversation.T(conversation.P("⏸ Run "), conversation.C(run.ID), conversation.P(" cannot continue where it stopped: its workspace is lost.\n"),
		conversation.O(p.Error), conversation.P("\nNext: "), conversation.C(fresh),
		conversation.P(" runs it again from its first node with the same arguments; "), conversation.C(abandon), conversation.P(" discards it."))
	return t, []conversation.Button{
		{Label: "Run again in a fresh workspace", Command: fresh, Style: conversation.StylePrimary},
		{Label: "Abandon", Command: abandon, Style: conversation.StyleDanger},
	}
}

func nextActions(t conversation.Text, run db.Run) (conversation.Text, []conversation.Button) {
	resume, abandon := cmd(commands.KindResume, run.ID), cmd(commands.KindAbandon, run.ID)
	t = t.Append(conversation.P("\nNext: "), conversation.C(resume), conversation.P(" continues where it stopped; "),
		conversation.C(abandon), conversation.P(" discards it."))
	return t, []conversation.Button{
		{Label: "Resume", Command: resume, Style: conversation.StylePrimary},
		{Label: "Abandon", Command: abandon, Style: conversation.StyleDanger},
	}
}
