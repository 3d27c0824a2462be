package reporting

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"threadflow/conversation"
	"threadflow/db"
	"threadflow/orchestrator/execution"
)

// Reporter is the Notifier every platform shares: it renders what happens to runs as the messages
// they owe (owed.go) and records them in the outbox, which the Courier delivers through the
// adapter Outbox of the run's platform. Each run gets a root message in the channel that opens its
// thread, one live status message in that thread (edited, debounced, instead of a message per
// event), and a message for each gate, failure and completion. Post and Edit answer people
// directly (command replies), which no run owes.
type Reporter struct {
	Store    Store
	Outboxes map[string]conversation.Outbox
	Log      *zap.Logger
	Debounce time.Duration // minimum time between status edits; default 1s
	Observe  execution.Observer
	Courier  Waker // woken when a message becomes owed; nil: the next look of a courier
	// Admins are ADMIN_USER_IDS: who a gate listing @admins mentions or sends a DM (notify.go).
	Admins []string
	// RequesterAway is how long after starting a run its requester is told directly of its
	// decisions and end (DefaultRequesterAway when 0).
	RequesterAway time.Duration
	Now           func() time.Time // the clock; time.Now when nil

	mu       sync.Mutex
	progress map[string]*progressReport // runs with progress not yet owed
}

// Waker is the courier (maintenance.Courier) as reporting sees it: told when something became owed.
type Waker interface{ Wake() }

// Wake tells the courier that something became owed.
func (r *Reporter) Wake() {
	if r.Courier != nil {
		r.Courier.Wake()
	}
}

// progressReport is a run's progress waiting for its debounced status edit.
type progressReport struct {
	owing   sync.Mutex // held while its progress is owed, so Settle waits for an owe in flight
	timer   *time.Timer
	pending *execution.Notice // the latest progress not yet owed
	settled bool              // the run stopped here: later progress must not overwrite how
}

// Post sends a reply to an address, logging failures: a reply that cannot be sent must not fail
// the command that produced it.
// The adapters retry with bounded backoff; what reaches here has failed for good and is logged with
// the run the reply is about (rep.RunID), when there is one.
func (r *Reporter) Post(ctx context.Context, to conversation.Address, rep conversation.Reply) (conversation.Ref, bool) {
	var fields []zap.Field
	if rep.RunID != "" {
		fields = append(fields, zap.String("run_id", rep.RunID))
	}
	ob := r.Outboxes[to.Platform]
	if ob == nil {
		// Expected: a server executing the run of a terminal that is gone cannot print to it; the
		// run is reported on the dashboard, and in its conversation when a terminal attaches again.
		r.Log.Debug("orchestrator.notify_skipped", append(fields, zap.String("platform", to.Platform), zap.String("reason", "platform not connected to this process"))...)
		return conversation.Ref{}, false
	}
	ref, err := ob.Post(ctx, to, rep)
	if err != nil {
		execution.ObserverOr(r.Observe).SendFailed(to.Platform)
		r.Log.Warn("orchestrator.notify_failed", append(fields, zap.String("platform", to.Platform), zap.Error(err))...)
		return conversation.Ref{}, false
	}
	return ref, true
}

// Edit replaces a posted message.
func (r *Reporter) Edit(ctx context.Context, ref conversation.Ref, rep conversation.Reply) {
	ob := r.Outboxes[ref.Platform]
	if ob == nil {
		return
	}
	if err := ob.Edit(ctx, ref, rep); err != nil {
		r.Log.Warn("orchestrator.edit_failed", zap.String("platform", ref.Platform), zap.Error(err))
	}
}

// Announce is what a new run owes: its announcement and status message, written with the run
// (NewRun.Owe) and posted once it exists.
func (r *Reporter) Announce(run db.Run, by conversation.Person) []db.Owed {
	return announceOwed(run, by)
}

// Owing is what a transition that n reports owes, rendered from the run as the transition leaves
// it: the worker passes it to the transition, so the message is recorded with it.
func (r *Reporter) Owing(n execution.Notice) db.Owing {
	return func(run db.Run) []db.Owed {
		n.Run = run
		return append(noticeOwed(n, r.capsOf(run), r.gateMentions(n)...), r.transitionTold(n)...)
	}
}

// gateMentions are the mentions a gate's question ends with (notify: mention).
func (r *Reporter) gateMentions(n execution.Notice) []conversation.Span {
	if n.Kind != execution.NoticeGate {
		return nil
	}
	tell, _ := r.gateTold(n.Run, n.Run.Meta.Pause, aboutGate, nil)
	return tell
}

// capsOf is what people can do on the run's platform.
func (r *Reporter) capsOf(run db.Run) conversation.Capabilities {
	platform, _, _, _ := db.ParseConversationKey(run.ConversationID)
	return conversation.CapabilitiesOf(r.Outboxes[platform])
}

// owe records messages run owes outside a transition. When the database cannot record them (its
// disk is full, it is read-only: the moments a run most needs to say something), the messages
// posted in the thread are posted at once instead, unrecorded: said once, at most.
func (r *Reporter) owe(ctx context.Context, run db.Run, owed []db.Owed) {
	if len(owed) == 0 {
		return
	}
	err := r.Store.Owe(ctx, run.ID, owed...)
	if err == nil {
		r.Wake()
		return
	}
	r.Log.Warn("orchestrator.owe_failed", zap.String("run_id", run.ID), zap.Error(err))
	platform, channel, thread, ok := db.ParseConversationKey(run.ConversationID)
	if !ok {
		return
	}
	for _, o := range owed {
		var rep conversation.Reply
		if o.Target != db.TargetThread || json.Unmarshal(o.Reply, &rep) != nil {
			continue
		}
		r.Post(ctx, conversation.Address{Platform: platform, ChannelID: channel, ThreadID: thread}, rep)
	}
}

// Note says a remark in a run's thread.
func (r *Reporter) Note(ctx context.Context, run db.Run, t conversation.Text) {
	r.Notify(ctx, execution.Notice{Kind: execution.NoticeNote, Run: run, Text: t})
}

// askBacks are the kinds of the run's recorded ask-backs, whose buttons answering the gate takes
// away.
func (r *Reporter) askBacks(ctx context.Context, runID string) []string {
	refs, err := r.Store.MessageRefs(ctx, runID)
	if err != nil {
		r.Log.Warn("orchestrator.message_refs_failed", zap.String("run_id", runID), zap.Error(err))
		return nil
	}
	var out []string
	for _, m := range refs {
		if strings.HasPrefix(m.Kind, refAskBack) {
			out = append(out, m.Kind)
		}
	}
	return out
}

// AskBack posts the question about an unclear reply (recorded as event seq) where the reply was
// made, and records it so that answering the gate takes its buttons away. It answers a person's
// message, so it is posted at once, not owed.
func (r *Reporter) AskBack(ctx context.Context, run db.Run, at conversation.Address, seq int64, rep conversation.Reply) {
	rep.RunID = run.ID
	ref, ok := r.Post(ctx, at, rep)
	if !ok {
		return
	}
	m := db.MessageRef{RunID: run.ID, Kind: refAskBack + strconv.FormatInt(seq, 10), Platform: ref.Platform, ChannelID: ref.ChannelID,
		ThreadID: ref.ThreadID, MessageID: ref.MessageID}
	if err := r.Store.SetMessageRef(ctx, m); err != nil {
		r.Log.Warn("orchestrator.message_refs_failed", zap.String("run_id", run.ID), zap.Error(err))
	}
}

// Notify implements Notifier. Progress is debounced onto the status message; any other notice
// owes its messages now. A notice whose transition recorded them already (Owing) owes nothing new:
// its keys are recorded, and the status message's content is the same.
func (r *Reporter) Notify(ctx context.Context, n execution.Notice) {
	if n.Kind == execution.NoticeProgress {
		r.debounced(n)
		return
	}
	if n.Kind != execution.NoticeNote {
		r.Settle(n.Run.ID)
	}
	if n.Kind == execution.NoticeCancelled && n.Nodes == nil {
		n.Nodes = r.closedNodes(ctx, n.Run)
	}
	r.owe(ctx, n.Run, noticeOwed(n, r.capsOf(n.Run), r.gateMentions(n)...))
}

// debounced owes node progress on the status message at most once per Debounce.
func (r *Reporter) debounced(n execution.Notice) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.progress == nil {
		r.progress = map[string]*progressReport{}
	}
	p := r.progress[n.Run.ID]
	if p == nil {
		p = &progressReport{}
		r.progress[n.Run.ID] = p
	}
	if p.settled {
		return
	}
	p.pending = &n
	if p.timer != nil {
		return
	}
	p.timer = time.AfterFunc(r.debounce(), func() {
		p.owing.Lock()
		defer p.owing.Unlock()
		r.mu.Lock()
		pending := p.pending
		p.pending, p.timer = nil, nil
		settled := p.settled
		r.mu.Unlock()
		if settled || pending == nil {
			return
		}
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		r.owe(ctx, pending.Run, noticeOwed(*pending, r.capsOf(pending.Run)))
	})
}

// Settle drops the run's pending progress: it stopped, and says how. A run resumed later starts
// over (Resumed).
//
// It waits for progress being owed at that moment: the stop's status, owed after it, must not be
// overwritten by older progress.
func (r *Reporter) Settle(runID string) {
	r.mu.Lock()
	p := r.progress[runID]
	delete(r.progress, runID)
	if p != nil && p.timer != nil {
		p.timer.Stop()
	}
	r.mu.Unlock()
	if p == nil {
		return
	}
	p.owing.Lock()
	r.mu.Lock()
	p.settled = true
	r.mu.Unlock()
	p.owing.Unlock()
}

// SettleAll settles every run's pending progress (Settle): the engine calls it as it stops, once
// no worker notifies any more, so that no debounce timer owes progress after the process closed
// its store (the owe would fail, and its warning reach a terminal as `bot chat` exits). Progress
// dropped here is not lost: the status message says how the run stopped, or the next owner of a
// run still running reports its progress.
func (r *Reporter) SettleAll() {
	r.mu.Lock()
	ids := make([]string, 0, len(r.progress))
	for id := range r.progress {
		ids = append(ids, id)
	}
	r.mu.Unlock()
	for _, id := range ids {
		r.Settle(id)
	}
}

func (r *Reporter) debounce() time.Duration {
	if r.Debounce <= 0 {
		return time.Second
	}
	return r.Debounce
}

// closedNodes is every node of a cancelled run as the fold closed it, for its status message: what
// cancelled the run (a person, a rejection, a gate's timer) knows nothing of its nodes.
func (r *Reporter) closedNodes(ctx context.Context, run db.Run) []execution.NodeStatus {
	events, err := r.Store.Events(ctx, run.ID)
	if err != nil {
		r.Log.Warn("orchestrator.status_nodes_unread", zap.String("run_id", run.ID), zap.Error(err))
		return nil // the status message says cancelled, without its nodes
	}
	var out []execution.NodeStatus
	for _, v := range execution.RunNodes(run, events) {
		out = append(out, execution.NodeStatus{ID: v.ID, State: v.State, Attempt: v.Attempts, Duration: v.Duration})
	}
	return out
}

// AnswerOwed is what an answer to the gate run waits at owes, recorded with the answer
// (db.GateResolution.Owe): an approval that does not open the gate yet is noted in the thread; one
// that resolves it settles the question and its ask-backs and says the decision in the thread, and
// a rejection shows the run cancelled (with its nodes once they are read, after the answer:
// Notify).
func (r *Reporter) AnswerOwed(ctx context.Context, run db.Run, by conversation.Person) func(db.GateResult) []db.Owed {
	askBacks := r.askBacks(ctx, run.ID)
	p := run.Meta.Pause
	return func(res db.GateResult) []db.Owed {
		if !res.Resolved {
			return noticeOwed(execution.Notice{Kind: execution.NoticeNote, Run: res.Run, Text: ApprovalCountedText(res, by),
				Key: gateKey(run.ID, p, "approval", by.ID)}, conversation.Capabilities{})
		}
		decision := GateDecisionText(res, by)
		out := resolvedOwed(run.ID, p, askBacks, decision)
		if res.Run.Status == db.StatusCancelled {
			out = append(out, noticeOwed(execution.Notice{Kind: execution.NoticeCancelled, Run: res.Run}, conversation.Capabilities{})...)
		}
		return append(out, r.requesterTold(res.Run, gateKey(run.ID, p, "requester"), aboutDecision, by.ID, r.now(), decision)...)
	}
}

// Resumed is what a resume owes, recorded with it: the note that it resumes and a fresh status
// message, out before anything a worker reports on the resumed run.
func (r *Reporter) Resumed(note conversation.Text) db.Owing {
	return func(run db.Run) []db.Owed { return resumedOwed(run, note) }
}

// TimerOwed is what a gate timer that fires at now owes, recorded with it: a reminder's note and
// an escalation's, telling the gate's people again as its notify says, or a timeout's settled
// question, its decision in the thread and the run's cancelled status (and its requester told).
func (r *Reporter) TimerOwed(t db.GateTimer, now time.Time) []db.Owed {
	switch t.Kind {
	case db.TimerReminder:
		return r.toldAgain(t, aboutReminder, ReminderText(t.Run, t.Pause, now))
	case db.TimerEscalation:
		return r.toldAgain(t, aboutEscalation, EscalationText(t.Run, t.Pause))
	}
	text := TimeoutText(t.Run, t.Pause)
	out := resolvedOwed(t.Run.ID, &t.Pause, nil, text)
	out = append(out, noticeOwed(execution.Notice{Kind: execution.NoticeCancelled, Run: t.Run}, conversation.Capabilities{})...)
	return append(out, r.requesterTold(t.Run, gateKey(t.Run.ID, &t.Pause, "requester"), aboutDecision, db.TimeoutActor, now, text)...)
}

// toldAgain is a reminder's or an escalation's note in the thread, mentioning the gate's people or
// with a direct message to each, as its notify says.
func (r *Reporter) toldAgain(t db.GateTimer, about string, text conversation.Text) []db.Owed {
	tell, direct := r.gateTold(t.Run, &t.Pause, about, text)
	note := owed(about, gateKey(t.Run.ID, &t.Pause, about), db.TargetThread, "", conversation.Reply{Text: text.Append(tell...)})
	return append([]db.Owed{note}, direct...)
}

// TimedOut owes, after a gate timed out, what the timer's transaction could not read: the ask-backs'
// settled buttons, and the status message with the run's nodes.
func (r *Reporter) TimedOut(ctx context.Context, t db.GateTimer) {
	if askBacks := r.askBacks(ctx, t.Run.ID); len(askBacks) > 0 {
		r.owe(ctx, t.Run, resolvedOwed(t.Run.ID, &t.Pause, askBacks, TimeoutText(t.Run, t.Pause)))
	}
	r.Notify(ctx, execution.Notice{Kind: execution.NoticeCancelled, Run: t.Run})
}
