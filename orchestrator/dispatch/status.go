package dispatch

import (
	"context"
	"sort"
	"strings"
	"time"

	"threadflow/commands"
	"threadflow/conversation"
	"threadflow/db"
	"threadflow/orchestrator/reporting"
)

// recentStopped is how many failed, and how many finished (completed or cancelled), runs
// `/workflow status` lists besides the active ones.
const recentStopped = 5

func (b *Dispatcher) status(ctx context.Context, m conversation.Message, c commands.Command) {
	if c.RunID != "" {
		run, ok := b.resolveRun(ctx, m, c.RunID)
		if !ok {
			return
		}
		t, err := reporting.RunTimeline(ctx, b.Store, run, time.Now())
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
			t = t.Append(conversation.P("• "), conversation.C(r.ID), conversation.P(" "+r.Workflow+" - "+reporting.DisplayState(r, now)))
			if r.Status != db.StatusCompleted { // where it waits, failed or stopped
				if node := b.currentNode(ctx, r); node != "" {
					t = t.Append(conversation.P(" at "), conversation.C(node))
				}
			}
			if took := reporting.RunTook(r); took != "" { // how long it took, and how long ago it stopped
				t = t.Append(conversation.P(" " + took + ", " + reporting.Age(now.Sub(r.FinishedAt)) + " ago"))
			} else {
				t = t.Append(conversation.P(" - started " + reporting.Age(now.Sub(r.CreatedAt)) + " ago"))
			}
			t = t.Append(conversation.P(" - by "), reporting.Requester(r).Span(), conversation.P("\n"))
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

func (b *Dispatcher) list(ctx context.Context, m conversation.Message) {
	cat := b.Catalogs.Catalog()
	t := conversation.T(conversation.B("Workflows"), conversation.P("\n"))
	for _, wf := range cat.List() {
		if b.CheckAccess(ctx, wf, m.Address, m.Sender()) != nil { // a person sees what they may run here
			continue
		}
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
