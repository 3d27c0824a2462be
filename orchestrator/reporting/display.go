package reporting

import (
	"context"
	"fmt"
	"threadflow/conversation"
	"threadflow/db"
	"threadflow/orchestrator/execution"
	"threadflow/workflow"
	"time"

	"github.com/dustin/go-humanize"
)

// Interrupted is the state shown for a running run whose lease expired: its worker died and the
// rescuer has not re-queued it yet. It is derived, never stored.
const Interrupted = "interrupted"

// DisplayState is the truthful state of a run for people: a terminal run is never active, and a
// running run without a live lease is interrupted.
func DisplayState(r db.Run, now time.Time) string {
	if r.Status == db.StatusRunning && !r.LeaseExpiresAt.IsZero() && r.LeaseExpiresAt.Before(now) {
		return Interrupted
	}
	return string(r.Status)
}

// Active reports whether a run is still in progress or waiting: queued, running or paused.
func Active(r db.Run) bool {
	return r.Status == db.StatusQueued || r.Status == db.StatusRunning || r.Status == db.StatusPaused
}

// EventReader is the part of the store RunTimeline reads.
type EventReader interface {
	Events(ctx context.Context, runID string) ([]db.Event, error)
	AgentUsage(ctx context.Context, q db.UsageQuery) ([]db.UsageSum, error)
	GroupReader
}

// RunTimeline renders one run: state, every node of its workflow with its attempts and durations,
// the gates' answers and the last error.
func RunTimeline(ctx context.Context, s EventReader, r db.Run, now time.Time) (conversation.Text, error) {
	events, err := s.Events(ctx, r.ID)
	if err != nil {
		return nil, err
	}
	t := conversation.T(conversation.P("Run "), conversation.C(r.ID), conversation.P(" of "), conversation.C(r.Workflow),
		conversation.P(" - "), conversation.B(DisplayState(r, now)))
	if took := RunTook(r); took != "" {
		t = t.Append(conversation.P(" " + took))
	}
	t = t.Append(conversation.P(" - started "+Age(now.Sub(r.CreatedAt))+" ago by "), Requester(r).Span(), conversation.P("\n"))
	if in := InputsText(r.Inputs); in != nil {
		t = t.Append(in...).Append(conversation.P("\n"))
	}
	g, err := GroupLine(ctx, s, r)
	if err != nil {
		return nil, err
	}
	if g != nil {
		t = t.Append(conversation.P("It ")).Append(g...).Append(conversation.P("\n"))
	}
	for _, n := range execution.RunNodes(r, events) {
		t = t.Append(nodeLine(n)...)
		for _, r := range n.Retries {
			t = t.Append(conversation.P(fmt.Sprintf("    attempt %d failed, retried: ", r.Attempt)), conversation.O(execution.ShortReason(r.Reason)), conversation.P("\n"))
		}
	}
	t = t.Append(gateAnswers(events, now)...)
	if p := r.Meta.Pause; r.Status == db.StatusPaused && p != nil {
		t = t.Append(conversation.P("Waiting at "), conversation.C(p.Node), conversation.P(": "), conversation.U(firstNonEmpty(p.Message, p.Error)), conversation.P("\n"))
	}
	if e := r.Meta.LastError; e != nil && r.Status != db.StatusCompleted {
		t = t.Append(conversation.P("Last error at "), conversation.C(e.Node), conversation.P(": "), conversation.O(e.Message), conversation.P("\n"))
	}
	sums, err := s.AgentUsage(ctx, db.UsageQuery{RunIDs: []string{r.ID}})
	if err != nil {
		return nil, err
	}
	if u := db.UsageOf(sums, ""); u.Turns > 0 {
		t = t.Append(conversation.P("AI usage: " + UsageText(u) + "\n"))
	}
	return t, nil
}

// nodeLine is one node of the text status: its mark, attempts and duration, and for a node the run's
// stop closed, why (a rejected gate's answer is on the gate's own line below).
func nodeLine(n execution.NodeView) []conversation.Span {
	line := fmt.Sprintf("• %s %s", stateIcon(n.State), n.ID)
	if n.Attempts > 1 {
		line += fmt.Sprintf(" (attempt %d)", n.Attempts)
	}
	if n.Duration > 0 && n.State != string(workflow.StateSkipped) {
		line += " " + execution.FormatDuration(n.Duration)
	}
	out := []conversation.Span{conversation.P(line)}
	switch n.State {
	case execution.NodeRejected:
		out = append(out, conversation.P(" - rejected"))
	case execution.NodeCancelled, execution.NodeNotRun:
		out = append(out, conversation.P(" - "), conversation.U(execution.ShortReason(n.Reason)))
		if n.Partial && n.Output.Bytes > 0 {
			out = append(out, conversation.P("; its output so far ("+humanize.IBytes(uint64(n.Output.Bytes))+") is kept"))
		}
	}
	return append(out, conversation.P("\n"))
}

// RunTook says how long a run that stopped took, from its creation to its stop: "in 14s" for a
// completed run, "after 2m5s" for one that failed or was cancelled; "" while it is active.
func RunTook(r db.Run) string {
	if Active(r) || r.FinishedAt.IsZero() || r.FinishedAt.Before(r.CreatedAt) {
		return ""
	}
	d := execution.FormatDuration(r.FinishedAt.Sub(r.CreatedAt))
	if r.Status == db.StatusCompleted {
		return "in " + d
	}
	return "after " + d
}

// stateIcon is the mark of a node state in text: each state its own, so waiting at a gate and
// running never look alike.
func stateIcon(state string) string {
	switch state {
	case "completed":
		return "✓"
	case "failed":
		return "✗"
	case "skipped":
		return "–"
	case "running":
		return "▶"
	case execution.NodeWaiting:
		return "⏸"
	case execution.NodeRejected:
		return "🛑"
	case execution.NodeCancelled:
		return "⏹"
	case execution.NodeNotRun:
		return "○"
	}
	return "·"
}

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}

// Age renders a duration for people: 45s, 12m, 3h, 2d.
func Age(d time.Duration) string {
	switch {
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh", int(d.Hours()))
	}
	return fmt.Sprintf("%dd", int(d.Hours()/24))
}
