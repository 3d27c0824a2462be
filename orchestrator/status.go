package orchestrator

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/dustin/go-humanize"

	"threadflow/commands"
	"threadflow/conversation"
	"threadflow/db"
	"threadflow/workflow"
)

// recentStopped is how many failed, and how many finished (completed or cancelled), runs
// `/workflow status` lists besides the active ones.
const recentStopped = 5

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

func (b *Dispatcher) status(ctx context.Context, m conversation.Message, c commands.Command) {
	if c.RunID != "" {
		run, ok := b.resolveRun(ctx, m, c.RunID)
		if !ok {
			return
		}
		t, err := RunTimeline(ctx, b.Store, run, time.Now())
		if err != nil {
			b.internalError(ctx, m, "read the run", err)
			return
		}
		b.reply(ctx, m, t)
		return
	}
	active, err := b.conversationRuns(ctx, m, []db.Status{db.StatusQueued, db.StatusRunning, db.StatusPaused})
	if err != nil {
		b.internalError(ctx, m, "list runs", err)
		return
	}
	failed, err := b.conversationRuns(ctx, m, []db.Status{db.StatusFailed})
	if err != nil {
		b.internalError(ctx, m, "list runs", err)
		return
	}
	finished, err := b.conversationRuns(ctx, m, []db.Status{db.StatusCompleted, db.StatusCancelled})
	if err != nil {
		b.internalError(ctx, m, "list runs", err)
		return
	}
	b.reply(ctx, m, b.statusList(ctx, active, failed[:min(len(failed), recentStopped)], finished[:min(len(finished), recentStopped)]))
}

// conversationRuns lists runs started in or reported to this conversation, newest first.
func (b *Dispatcher) conversationRuns(ctx context.Context, m conversation.Message, statuses []db.Status) ([]db.Run, error) {
	conv := m.ConversationID()
	started, err := b.Store.ListRuns(ctx, db.RunFilter{Statuses: statuses, ParentConversationID: conv, Limit: 50})
	if err != nil {
		return nil, err
	}
	inThread, err := b.Store.ListRuns(ctx, db.RunFilter{Statuses: statuses, ConversationID: conv, Limit: 50})
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []db.Run
	for _, r := range append(started, inThread...) {
		if !seen[r.ID] {
			seen[r.ID] = true
			out = append(out, r)
		}
	}
	sortNewestFirst(out)
	return out, nil
}

func (b *Dispatcher) statusList(ctx context.Context, active, failed, finished []db.Run) conversation.Text {
	if len(active)+len(failed)+len(finished) == 0 {
		return conversation.T(conversation.P("No runs in this conversation yet. "), conversation.C("/workflow list"), conversation.P(" shows what you can run."))
	}
	now := time.Now()
	t := conversation.T()
	section := func(title string, runs []db.Run) {
		if len(runs) == 0 {
			return
		}
		t = t.Append(conversation.B(title), conversation.P("\n"))
		for _, r := range runs {
			t = t.Append(conversation.P("• "), conversation.C(r.ID), conversation.P(" "+r.Workflow+" - "+DisplayState(r, now)))
			if r.Status != db.StatusCompleted { // where it waits, failed or stopped
				if node := b.currentNode(ctx, r); node != "" {
					t = t.Append(conversation.P(" at "), conversation.C(node))
				}
			}
			if took := runTook(r); took != "" { // how long it took, and how long ago it stopped
				t = t.Append(conversation.P(" " + took + ", " + age(now.Sub(r.FinishedAt)) + " ago"))
			} else {
				t = t.Append(conversation.P(" - started " + age(now.Sub(r.CreatedAt)) + " ago"))
			}
			t = t.Append(conversation.P(" - by "), requester(r).Span(), conversation.P("\n"))
		}
	}
	section("Active", active)
	section("Recently failed", failed)
	section("Recently finished", finished)
	return t
}

// currentNode is the node a run is at: the gate it waits on, the node that failed, or the latest
// node started.
func (b *Dispatcher) currentNode(ctx context.Context, r db.Run) string {
	if r.Meta.Pause != nil {
		return r.Meta.Pause.Node
	}
	if r.Status == db.StatusFailed && r.Meta.LastError != nil {
		return r.Meta.LastError.Node
	}
	events, err := b.Store.Events(ctx, r.ID)
	if err != nil {
		return ""
	}
	for i := len(events) - 1; i >= 0; i-- {
		if events[i].Type == db.EventNodeStarted {
			return events[i].NodeID
		}
	}
	return ""
}

// RunTimeline renders one run: state, every node of its workflow with its attempts and durations,
// the gates' answers and the last error.
func RunTimeline(ctx context.Context, s Store, r db.Run, now time.Time) (conversation.Text, error) {
	events, err := s.Events(ctx, r.ID)
	if err != nil {
		return nil, err
	}
	t := conversation.T(conversation.P("Run "), conversation.C(r.ID), conversation.P(" of "), conversation.C(r.Workflow),
		conversation.P(" - "), conversation.B(DisplayState(r, now)))
	if took := runTook(r); took != "" {
		t = t.Append(conversation.P(" " + took))
	}
	t = t.Append(conversation.P(" - started "+age(now.Sub(r.CreatedAt))+" ago by "), requester(r).Span(), conversation.P("\n"))
	for _, n := range RunNodes(r, events) {
		t = t.Append(nodeLine(n)...)
		for _, r := range n.Retries {
			t = t.Append(conversation.P(fmt.Sprintf("    attempt %d failed, retried: ", r.Attempt)), conversation.O(shortReason(r.Reason)), conversation.P("\n"))
		}
	}
	t = t.Append(gateAnswers(events, now)...)
	if p := r.Meta.Pause; r.Status == db.StatusPaused && p != nil {
		t = t.Append(conversation.P("Waiting at "), conversation.C(p.Node), conversation.P(": "), conversation.U(firstNonEmpty(p.Message, p.Error)), conversation.P("\n"))
	}
	if e := r.Meta.LastError; e != nil && r.Status != db.StatusCompleted {
		t = t.Append(conversation.P("Last error at "), conversation.C(e.Node), conversation.P(": "), conversation.O(e.Message), conversation.P("\n"))
	}
	return t, nil
}

// nodeLine is one node of the text status: its mark, attempts and duration, and for a node the run's
// stop closed, why (a rejected gate's answer is on the gate's own line below).
func nodeLine(n NodeView) []conversation.Span {
	line := fmt.Sprintf("• %s %s", stateIcon(n.State), n.ID)
	if n.Attempts > 1 {
		line += fmt.Sprintf(" (attempt %d)", n.Attempts)
	}
	if n.Duration > 0 && n.State != string(workflow.StateSkipped) {
		line += " " + FormatDuration(n.Duration)
	}
	out := []conversation.Span{conversation.P(line)}
	switch n.State {
	case NodeRejected:
		out = append(out, conversation.P(" - rejected"))
	case NodeCancelled, NodeNotRun:
		out = append(out, conversation.P(" - "), conversation.U(shortReason(n.Reason)))
		if n.Partial && n.Output.Bytes > 0 {
			out = append(out, conversation.P("; its output so far ("+humanize.IBytes(uint64(n.Output.Bytes))+") is kept"))
		}
	}
	return append(out, conversation.P("\n"))
}

// runTook says how long a run that stopped took, from its creation to its stop: "in 14s" for a
// completed run, "after 2m5s" for one that failed or was cancelled; "" while it is active.
func runTook(r db.Run) string {
	if Active(r) || r.FinishedAt.IsZero() || r.FinishedAt.Before(r.CreatedAt) {
		return ""
	}
	d := FormatDuration(r.FinishedAt.Sub(r.CreatedAt))
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
	case NodeWaiting:
		return "⏸"
	case NodeRejected:
		return "🛑"
	case NodeCancelled:
		return "⏹"
	case NodeNotRun:
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

// age renders a duration for people: 45s, 12m, 3h, 2d.
func age(d time.Duration) string {
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

func (b *Dispatcher) list(ctx context.Context, m conversation.Message) {
	cat := b.Catalogs.Catalog()
	t := conversation.T(conversation.B("Workflows"), conversation.P("\n"))
	for _, wf := range cat.List() {
		t = t.Append(conversation.P("• "), conversation.C(wf.Name))
		if d := strings.TrimSpace(wf.Description); d != "" {
			t = t.Append(conversation.P(" - "), conversation.U(firstLine(d)))
		}
		t = t.Append(conversation.P("\n"))
	}
	b.reply(ctx, m, t.Append(conversation.P("Run one with "), conversation.C("/workflow run NAME [ARGS...]")))
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}

func (b *Dispatcher) reset(ctx context.Context, m conversation.Message) {
	err := b.Store.SetSession(ctx, db.Session{ConversationID: m.ConversationID(), Provider: b.Assistant.DefaultName})
	if err != nil {
		b.internalError(ctx, m, "forget the session", err)
		return
	}
	b.reply(ctx, m, conversation.T(conversation.P("Forgot this conversation's AI session; the next message starts fresh.")))
}

func sortNewestFirst(runs []db.Run) {
	sort.SliceStable(runs, func(i, j int) bool { return runs[i].CreatedAt.After(runs[j].CreatedAt) })
}
