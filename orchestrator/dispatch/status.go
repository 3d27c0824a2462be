package dispatch

import (
	"context"
	"fmt"
	"slices"
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
	conv := m.ConversationID()
	// The three sections in one query: each state up to what its section shows.
	each := map[db.Status]int{}
	for _, st := range activeStatuses {
		each[st] = activeShown
	}
	for _, st := range []db.Status{db.StatusFailed, db.StatusCompleted, db.StatusCancelled} {
		each[st] = recentStopped
	}
	runs, err := b.Store.ListRuns(ctx, db.RunFilter{InConversation: conv, Each: each, WithoutSource: true})
	if err != nil {
		b.internalError(ctx, m, "list runs", err)
		return
	}
	var sections [3][]db.Run
	got := map[db.Status]int{}
	for _, r := range runs { // newest first
		got[r.Status]++
		i := 2
		switch {
		case slices.Contains(activeStatuses, r.Status):
			i = 0
		case r.Status == db.StatusFailed:
			i = 1
		}
		if len(sections[i]) < []int{activeShown, recentStopped, recentStopped}[i] {
			sections[i] = append(sections[i], r)
		}
	}
	// How many active and failed runs are left out. A state the query returned fewer of than it
	// asked for was returned whole; only a state that filled its limit is counted, up to
	// statusCounted, so the count costs the same however long the history.
	var more [2]leftOut
	for i, statuses := range [][]db.Status{activeStatuses, {db.StatusFailed}} {
		var full []db.Status
		total := 0
		for _, st := range statuses {
			if got[st] == each[st] {
				full = append(full, st)
			} else {
				total += got[st]
			}
		}
		if len(full) > 0 {
			counted, err := b.Store.CountRuns(ctx, db.RunFilter{InConversation: conv, Statuses: full, Limit: statusCounted})
			if err != nil {
				b.internalError(ctx, m, "count runs", err)
				return
			}
			for _, st := range full {
				total += min(counted[st], statusCounted)
				more[i].over = more[i].over || counted[st] > statusCounted
			}
		}
		more[i].n = total - len(sections[i])
	}
	b.reply(ctx, m, b.statusList(ctx, sections, more))
}

// statusCounted is how many runs of each state /workflow status counts to say how many it left
// out; past it, it says "over" that many (as the dashboard's counts say "1000+"). Counting walks
// the conversation's runs of the state in two indexes, so the bound is what the count costs: a
// few hundred index entries, however many runs the conversation has.
const statusCounted = 200

// leftOut is how many runs a section of /workflow status did not list: n, or more than n when over.
type leftOut struct {
	n    int
	over bool
}

// conversationRuns lists runs started in or reported to this conversation, newest first (at most
// activeShown).
func (b *Dispatcher) conversationRuns(ctx context.Context, m conversation.Message, statuses []db.Status) ([]db.Run, error) {
	return b.Store.ListRuns(ctx, db.RunFilter{InConversation: m.ConversationID(), Statuses: statuses, Limit: activeShown})
}

// activeStatuses are the states /workflow status lists as active.
var activeStatuses = []db.Status{db.StatusQueued, db.StatusRunning, db.StatusPaused}

// activeShown is how many active runs /workflow status lists, newest first; it says how many more
// there are.
const activeShown = 50

// statusList lists the active, recently failed and recently finished runs (sections), and says how
// many active and failed runs it left out (more).
func (b *Dispatcher) statusList(ctx context.Context, sections [3][]db.Run, more [2]leftOut) conversation.Text {
	if len(sections[0])+len(sections[1])+len(sections[2]) == 0 {
		return conversation.T(conversation.P("No runs in this conversation yet. "), conversation.C("/workflow list"), conversation.P(" shows what you can run."))
	}
	now := time.Now()
	t := conversation.T()
	section := func(title string, runs []db.Run, more leftOut, what string) {
		if len(runs) == 0 {
			return
		}
		defer func() {
			switch {
			case more.over:
				t = t.Append(conversation.P(fmt.Sprintf("…and over %d more %s, not listed here.\n", more.n, what)))
			case more.n > 0:
				t = t.Append(conversation.P(fmt.Sprintf("…and %d more %s, not listed here.\n", more.n, what)))
			}
		}()
		t = t.Append(conversation.B(title), conversation.P("\n"))
		for _, r := range runs {
			t = t.Append(conversation.P("• "), conversation.C(r.ID), conversation.P(" "+r.Workflow+" - "+reporting.DisplayState(r, now)))
			if g, err := reporting.GroupLine(ctx, b.Store, r); err == nil && g != nil && r.Status == db.StatusQueued {
				t = t.Append(conversation.P(", ")).Append(g...) // waiting for its group, not merely queued
			}
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
	section("Active", sections[0], more[0], "active runs")
	section("Recently failed", sections[1], more[1], "failed runs")
	section("Recently finished", sections[2], leftOut{}, "")
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
