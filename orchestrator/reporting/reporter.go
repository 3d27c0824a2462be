package reporting

import (
	"context"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"threadflow/conversation"
	"threadflow/db"
	"threadflow/orchestrator/execution"
)

// Reporter is the Notifier every platform shares: it renders run notices as conversation Replies
// and sends them through the adapter Outbox of the run's platform. Each run gets a root message
// in the channel that opens its thread, one live status message in that thread (edited, debounced,
// instead of a message per event), and a message for each gate, failure and completion.
type Reporter struct {
	Store    Store
	Outboxes map[string]conversation.Outbox
	Log      *zap.Logger
	Debounce time.Duration // minimum time between status edits; default 1s
	Observe  execution.Observer

	mu   sync.Mutex
	runs map[string]*runReport // runs this replica reported on; dropped when a run stops for good
}

// runReport remembers where a run is reported and which messages to edit. Its mutex serialises
// everything said about the run, so a gate answered while its question is still being posted edits
// the question instead of leaving live buttons behind, and a resumed run's status message is out
// before any report of its progress.
type runReport struct {
	mu       sync.Mutex
	addr     conversation.Address
	status   *conversation.Ref
	gate     *conversation.Ref
	askBacks map[string]conversation.Ref // questions about unclear replies, by ref kind, while their buttons are live
	timer    *time.Timer
	pending  *execution.Notice // the latest progress not yet shown
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

// Announce opens a new run's place before the run exists, so no worker can report on the run before
// its thread is there: a root message in the channel that opens the run's thread, and the live
// status message inside it. It returns the thread, which becomes the run's conversation so replies
// in it reach the run; on a platform without threads, or when posting fails, it returns at.
// The returned refs are the messages to record with the run when it is created.
func (r *Reporter) Announce(ctx context.Context, at conversation.Address, runID, workflow string, by conversation.Person) (conversation.Address, []db.MessageRef) {
	rep := &runReport{addr: at}
	root := conversation.T(conversation.P("▶ "), conversation.C(workflow), conversation.P(" - run "), conversation.C(runID),
		conversation.P(" by "), by.Span())
	if ob := r.Outboxes[at.Platform]; ob != nil {
		thread, _, err := ob.StartThread(ctx, at, conversation.Reply{Text: root, RunID: runID})
		if err != nil {
			r.Log.Warn("orchestrator.notify_failed", zap.String("run_id", runID), zap.Error(err))
		} else {
			rep.addr = thread
		}
	}
	status := statusText(db.Run{ID: runID}, string(db.StatusQueued), nil)
	if ref, ok := r.Post(ctx, rep.addr, conversation.Reply{Text: status, RunID: runID}); ok {
		rep.status = &ref
	}
	r.mu.Lock()
	r.report()[runID] = rep
	r.mu.Unlock()
	var refs []db.MessageRef
	if rep.status != nil {
		refs = append(refs, messageRef(runID, refStatus, rep.status))
	}
	return rep.addr, refs
}

// Hold locks a run's reports until the returned function is called: whoever holds it says the
// next thing about the run. The dispatcher holds it across a resume so that the fresh status
// message is posted before any worker reports on the resumed run.
func (r *Reporter) Hold(ctx context.Context, run db.Run) (unlock func()) {
	rep := r.lookup(ctx, run)
	if rep == nil {
		return func() {}
	}
	rep.mu.Lock()
	return rep.mu.Unlock
}

// Resumed says in the run's thread that it resumes, then posts a fresh live status message: the
// old one may be far up the thread, or unknown to this replica. The caller holds the run (Hold).
func (r *Reporter) Resumed(ctx context.Context, run db.Run, note conversation.Text) {
	rep := r.lookup(ctx, run)
	if rep == nil {
		return
	}
	r.Post(ctx, rep.addr, conversation.Reply{Text: note})
	if ref, ok := r.Post(ctx, rep.addr, conversation.Reply{Text: statusText(run, string(db.StatusQueued), nil)}); ok {
		rep.status = &ref
		r.saveRef(ctx, run.ID, refStatus, &ref)
	}
}

func (r *Reporter) report() map[string]*runReport {
	if r.runs == nil {
		r.runs = map[string]*runReport{}
	}
	return r.runs
}

// lookup returns what this replica knows about a run's reporting, resolving its thread from the
// database when another replica started it.
func (r *Reporter) lookup(ctx context.Context, run db.Run) *runReport {
	r.mu.Lock()
	rep := r.report()[run.ID]
	r.mu.Unlock()
	if rep != nil {
		return rep
	}
	conv := run.ConversationID
	if fresh, err := r.Store.GetRun(ctx, run.ID); err == nil {
		conv = fresh.ConversationID
	}
	platform, channel, thread, ok := db.ParseConversationKey(conv)
	if !ok {
		return nil
	}
	rep = &runReport{addr: conversation.Address{Platform: platform, ChannelID: channel, ThreadID: thread}}
	r.loadRefs(ctx, run.ID, rep)
	r.mu.Lock()
	defer r.mu.Unlock()
	if existing := r.report()[run.ID]; existing != nil {
		return existing
	}
	r.report()[run.ID] = rep
	return rep
}

// Message kinds remembered in the database, so any replica (also after a restart) edits the
// run's live status message and settles its gate question.
const (
	refStatus  = "status"
	refGate    = "gate"
	refAskBack = "ask_back:" // + the seq of the reply asked about
)

// loadRefs reads the run's status and gate messages recorded by whichever replica posted them.
func (r *Reporter) loadRefs(ctx context.Context, runID string, rep *runReport) {
	refs, err := r.Store.MessageRefs(ctx, runID)
	if err != nil {
		r.Log.Warn("orchestrator.message_refs_failed", zap.String("run_id", runID), zap.Error(err))
		return
	}
	for _, m := range refs {
		ref := &conversation.Ref{Address: conversation.Address{Platform: m.Platform, ChannelID: m.ChannelID, ThreadID: m.ThreadID}, MessageID: m.MessageID}
		switch m.Kind {
		case refStatus:
			rep.status = ref
		case refGate:
			rep.gate = ref
		default:
			if strings.HasPrefix(m.Kind, refAskBack) {
				if rep.askBacks == nil {
					rep.askBacks = map[string]conversation.Ref{}
				}
				rep.askBacks[m.Kind] = *ref
			}
		}
	}
}

// saveRef records (nil: forgets) one of the run's messages. Failing costs only a later edit, so it
// is logged, not returned.
func (r *Reporter) saveRef(ctx context.Context, runID, kind string, ref *conversation.Ref) {
	if err := r.Store.SetMessageRef(ctx, messageRef(runID, kind, ref)); err != nil {
		r.Log.Warn("orchestrator.message_refs_failed", zap.String("run_id", runID), zap.Error(err))
	}
}

// messageRef is the stored form of one of a run's messages; a nil ref forgets it.
func messageRef(runID, kind string, ref *conversation.Ref) db.MessageRef {
	m := db.MessageRef{RunID: runID, Kind: kind}
	if ref != nil {
		m.Platform, m.ChannelID, m.ThreadID, m.MessageID = ref.Platform, ref.ChannelID, ref.ThreadID, ref.MessageID
	}
	return m
}

// Forget drops what the reporter remembers about a run that stopped for good, or that was never
// created (its announcement is dropped). A timer of a forgotten run finds nothing pending once
// showStatus cleared it.
func (r *Reporter) Forget(runID string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.report(), runID)
}

// Note posts a remark in a run's thread.
func (r *Reporter) Note(ctx context.Context, run db.Run, t conversation.Text) {
	r.Notify(ctx, execution.Notice{Kind: execution.NoticeNote, Run: run, Text: t})
}

// GateResolved shows the decision on the gate message and on every ask-back about an unclear
// reply (without their buttons, so nobody clicks a stale choice) and in the thread.
func (r *Reporter) GateResolved(ctx context.Context, run db.Run, t conversation.Text) {
	rep := r.lookup(ctx, run)
	if rep == nil {
		return
	}
	rep.mu.Lock()
	defer rep.mu.Unlock()
	if rep.gate != nil {
		r.Edit(ctx, *rep.gate, conversation.Reply{Text: t})
		rep.gate = nil
		r.saveRef(ctx, run.ID, refGate, nil)
	}
	for kind, ref := range rep.askBacks {
		r.Edit(ctx, ref, conversation.Reply{Text: t})
		r.saveRef(ctx, run.ID, kind, nil)
	}
	rep.askBacks = nil
	r.Post(ctx, rep.addr, conversation.Reply{Text: t})
}

// AskBack posts the question about an unclear reply (recorded as event seq) where the reply was
// made, and remembers it so that answering the gate takes its buttons away.
func (r *Reporter) AskBack(ctx context.Context, run db.Run, at conversation.Address, seq int64, rep conversation.Reply) {
	rep.RunID = run.ID
	ref, ok := r.Post(ctx, at, rep)
	report := r.lookup(ctx, run)
	if !ok || report == nil {
		return
	}
	kind := refAskBack + strconv.FormatInt(seq, 10)
	report.mu.Lock()
	defer report.mu.Unlock()
	if report.askBacks == nil {
		report.askBacks = map[string]conversation.Ref{}
	}
	report.askBacks[kind] = ref
	r.saveRef(ctx, run.ID, kind, &ref)
}

// Notify implements Notifier.
func (r *Reporter) Notify(ctx context.Context, n execution.Notice) {
	rep := r.lookup(ctx, n.Run)
	if rep == nil {
		r.Log.Warn("orchestrator.notify_failed", zap.String("run_id", n.Run.ID), zap.String("reason", "run has no conversation"))
		return
	}
	rep.mu.Lock()
	defer rep.mu.Unlock()
	switch n.Kind {
	case execution.NoticeProgress:
		r.progress(rep, n)
		return
	case execution.NoticeNote:
		r.Post(ctx, rep.addr, conversation.Reply{Text: n.Text, RunID: n.Run.ID})
		return
	}
	if n.Kind == execution.NoticeCancelled && n.Nodes == nil && rep.status != nil {
		n.Nodes = r.closedNodes(ctx, n.Run)
	}
	r.showStatus(ctx, rep, n)
	r.post(ctx, rep, n)
	if n.Kind != execution.NoticeGate && n.Kind != execution.NoticePaused {
		r.Forget(n.Run.ID)
	}
}

// post sends the notice's message; the caller holds rep.mu.
func (r *Reporter) post(ctx context.Context, rep *runReport, n execution.Notice) {
	msg, buttons := noticeMessage(n, conversation.CapabilitiesOf(r.Outboxes[rep.addr.Platform]))
	if msg == nil {
		return
	}
	ref, ok := r.Post(ctx, rep.addr, conversation.Reply{Text: msg, Buttons: buttons, RunID: n.Run.ID})
	if ok && n.Kind == execution.NoticeGate {
		rep.gate = &ref
		r.saveRef(ctx, n.Run.ID, refGate, &ref)
	}
}

// progress shows node progress on the status message at most once per Debounce; the caller holds
// rep.mu.
func (r *Reporter) progress(rep *runReport, n execution.Notice) {
	rep.pending = &n
	if rep.timer != nil {
		return
	}
	rep.timer = time.AfterFunc(r.debounce(), func() {
		rep.mu.Lock()
		defer rep.mu.Unlock()
		p := rep.pending
		rep.pending, rep.timer = nil, nil
		if p != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			r.showStatus(ctx, rep, *p)
		}
	})
}

func (r *Reporter) debounce() time.Duration {
	if r.Debounce <= 0 {
		return time.Second
	}
	return r.Debounce
}

// showStatus edits the live status message now, cancelling a pending debounced edit; the caller
// holds rep.mu.
func (r *Reporter) showStatus(ctx context.Context, rep *runReport, n execution.Notice) {
	if rep.timer != nil && n.Kind != execution.NoticeProgress {
		rep.timer.Stop()
		rep.timer, rep.pending = nil, nil
	}
	if rep.status != nil {
		r.Edit(ctx, *rep.status, conversation.Reply{Text: statusText(n.Run, stateOf(n), n.Nodes)})
	}
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
