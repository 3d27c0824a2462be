package dispatch

import (
	"context"
	"errors"
	"sync"

	"go.uber.org/zap"

	"threadflow/commands"
	"threadflow/conversation"
	"threadflow/db"
	"threadflow/orchestrator/newrun"
	"threadflow/orchestrator/reporting"
	"threadflow/workflow"
)

// previewRunes is how much of a prior run's request the resume prompt shows.
const previewRunes = 160

// runCommand handles `/workflow run NAME ARGS`. This is the resume gate: a fresh run never picks up
// an older failed or paused run of the same workflow in the same conversation. When one exists and
// --force was not given, nothing runs; the person sees the old run and chooses explicitly.
func (b *Dispatcher) runCommand(ctx context.Context, m conversation.Message, c commands.Command) {
	cat := b.Catalogs.Catalog()
	wf, ok := cat.Get(c.Workflow)
	if !ok {
		if probs := cat.Problems(c.Workflow); len(probs) > 0 {
			b.reply(ctx, m, reporting.BrokenWorkflowText(c.Workflow, probs))
			return
		}
		b.unknownWorkflow(ctx, m, c.Workflow, cat.Names())
		return
	}
	if err := wf.CheckArgs(c.ArgsText()); err != nil {
		b.reply(ctx, m, conversation.T(conversation.P(err.Error())))
		return
	}
	inputs, err := wf.RunInputs(c.Args)
	if err != nil {
		b.inputsRefused(ctx, m, wf, err)
		return
	}
	if err := b.CheckAccess(ctx, wf, m.Address, m.Sender()); err != nil { // before an earlier run is shown
		b.accessRefused(ctx, m, wf, err)
		return
	}
	id := requestRunID(m)
	if m.Recovered && b.alreadyStarted(ctx, m, id) {
		return
	}
	if !c.Force {
		prior, err := b.Store.FindResumable(ctx, wf.Name, m.ConversationID())
		if err == nil {
			b.promptPrior(ctx, m, c, prior)
			return
		}
		if !errors.Is(err, db.ErrNotFound) {
			b.internalError(ctx, m, "check for earlier runs", err)
			return
		}
	}
	run, err := b.startRun(ctx, id, m.Address, m.Sender(), wf, c.ArgsText(), inputs)
	var refused *commands.LimitError
	if errors.As(err, &refused) {
		b.reply(ctx, m, conversation.T(conversation.P(refused.Msg)))
		return
	}
	if errors.Is(err, workflow.ErrBadInput) {
		b.inputsRefused(ctx, m, wf, err)
		return
	}
	var busy *db.GroupBusyError
	if errors.As(err, &busy) {
		b.groupBusy(ctx, m, wf, busy)
		return
	}
	var denied *AccessError
	if errors.As(err, &denied) {
		b.accessRefused(ctx, m, wf, err)
		return
	}
	if err != nil {
		b.internalError(ctx, m, "start the run", err)
		return
	}
	b.settle(ctx, m, startedText(run.ID, m.Sender()))
}

// accessRefused tells the person, and only them where the platform can, why the workflow's access
// refused them, and logs it.
func (b *Dispatcher) accessRefused(ctx context.Context, m conversation.Message, wf *workflow.Workflow, err error) {
	var denied *AccessError
	if !errors.As(err, &denied) {
		b.internalError(ctx, m, "check who may start "+wf.Name, err)
		return
	}
	b.Log.Info("orchestrator.run_refused", zap.String("workflow", wf.Name), zap.String("user", MaskUser(m.UserID)),
		zap.String("conversation", m.ConversationID()), zap.String("rule", denied.Rule))
	b.replyEphemeral(ctx, m, conversation.T(conversation.P(denied.Msg))) // only they need to know

}

// StartRun creates a fresh run of wf, requested by by, in a fresh working directory with the
// workflow frozen into it. The requester's display name is stored with the run, so whichever
// replica reports on it later names them the same way.
// The run is created in the conversation it was asked in, owing its announcement: the courier
// posts it once the run exists, and the thread it opens becomes the run's conversation. Everything
// else the run owes waits behind it, so every report lands in the thread even when a worker claims
// the run at once. A run that could not be created was never announced: the caller says so.
//
// Arguments the limits refuse (*commands.LimitError), inputs the workflow refuses
// (*workflow.InputError), a busy concurrency group that refuses (*db.GroupBusyError) and people or
// places the workflow's access refuses (*AccessError) start nothing and write nothing: every way of
// starting a run comes through here. inputs are the run's typed inputs by name (newrun.Inputs checks
// them again).
func (b *Dispatcher) StartRun(ctx context.Context, at conversation.Address, by conversation.Person, wf *workflow.Workflow, args string, inputs map[string]string) (db.Run, error) {
	return b.startRun(ctx, db.NewRunID(), at, by, wf, args, inputs)
}

// requestRunID is the id of the run a chat request starts: derived from its platform event, so the
// request handled again after a crash names the same run (db.EventRunID); fresh for a request
// without one (the terminal, the web chat).
func requestRunID(m conversation.Message) string {
	if m.EventID == "" {
		return db.NewRunID()
	}
	return db.EventRunID(m.Platform, m.EventID)
}

// alreadyStarted reports whether the run a recovered request names exists: the process that died
// with the request had created it (and owed its announcement with it), so nothing is left to do.
func (b *Dispatcher) alreadyStarted(ctx context.Context, m conversation.Message, id string) bool {
	run, err := b.Store.GetRun(ctx, id)
	if err != nil {
		return false // not created (or not readable now): the creation below decides
	}
	b.Log.Info("orchestrator.recovered_request_found_its_run", zap.String("run_id", run.ID), zap.String("workflow", run.Workflow),
		zap.String("user", MaskUser(m.UserID)))
	b.settle(ctx, m, startedText(run.ID, m.Sender()))
	return true
}

func startedText(id string, by conversation.Person) conversation.Text {
	return conversation.T(conversation.P("Started a fresh run "), conversation.C(id), conversation.P(" for "), by.Span(), conversation.P("."))
}

// startRun is StartRun with the run's id given. A creation that finds the id taken by the same
// request (same workflow, same person: the request handled twice, by a process that took it over
// from one that died, or that was itself taken over) has found its run: that creation owed the
// announcement, once.
func (b *Dispatcher) startRun(ctx context.Context, id string, at conversation.Address, by conversation.Person, wf *workflow.Workflow, args string, inputs map[string]string) (db.Run, error) {
	// The run, the conversation it was asked in and what it owes are recorded in one transaction:
	// one write on the path every message of a burst shares.
	n, err := b.runMaker().NewRun(newrun.Request{ID: id, At: at, By: by, Workflow: wf, Args: args, Inputs: inputs, Parents: b.unrecorded(at)})
	if err != nil {
		return db.Run{}, err
	}
	if err := b.CheckAccess(ctx, wf, at, by); err != nil {
		return db.Run{}, err
	}
	run, err := b.Store.CreateRun(ctx, n)
	if errors.Is(err, db.ErrDuplicate) {
		if found, gerr := b.Store.GetRun(ctx, id); gerr == nil && found.Workflow == wf.Name && found.UserID == by.ID {
			b.Log.Info("orchestrator.run_found_created", zap.String("run_id", id), zap.String("workflow", wf.Name))
			return found, nil
		}
	}
	if err != nil {
		return db.Run{}, err
	}
	b.known.add(at.ConversationID())
	b.Log.Info("orchestrator.run_created", zap.String("run_id", run.ID), zap.String("workflow", wf.Name), zap.String("user", MaskUser(by.ID)))
	b.Reporter.Wake()
	b.Workers.Wake()
	return run, nil
}

// runMaker is the rule this dispatcher makes runs by (shared with the triggers).
func (b *Dispatcher) runMaker() newrun.Maker {
	return newrun.Maker{Limits: b.Limits, Dirs: b.Dirs, Reporter: b.Reporter}
}

// unrecorded is the conversation a run was asked for in, and for a thread its channel first, unless
// this process recorded them already: the run's creation records them. Conversations are never
// deleted, so one recorded need not be written again.
func (b *Dispatcher) unrecorded(a conversation.Address) []db.Conversation {
	id := a.ConversationID()
	if b.known.has(id) {
		return nil
	}
	if a.ThreadID == "" {
		return []db.Conversation{{ID: id, Platform: a.Platform, ChannelID: a.ChannelID}}
	}
	ch := a.Channel().ConversationID()
	return []db.Conversation{{ID: ch, Platform: a.Platform, ChannelID: a.ChannelID},
		{ID: id, Platform: a.Platform, ChannelID: a.ChannelID, ThreadID: a.ThreadID, ParentID: ch}}
}

// knownLimit bounds the conversations remembered as recorded; past it the set starts over, which
// costs one idempotent write per conversation, never correctness.
const knownLimit = 10000

// knownSet is a bounded set of conversation ids already recorded in the database.
type knownSet struct {
	mu  sync.Mutex
	ids map[string]struct{}
}

func (k *knownSet) has(id string) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	_, ok := k.ids[id]
	return ok
}

func (k *knownSet) add(id string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.ids == nil || len(k.ids) >= knownLimit {
		k.ids = make(map[string]struct{})
	}
	k.ids[id] = struct{}{}
}

// promptPrior tells the person about the earlier run instead of running anything, with the three
// ways forward as literal commands and buttons. The new arguments are kept in the --force command.
func (b *Dispatcher) promptPrior(ctx context.Context, m conversation.Message, c commands.Command, prior db.Run) {
	b.Log.Info("orchestrator.failed_resume_user_prompted", zap.String("run_id", prior.ID), zap.String("workflow", prior.Workflow),
		zap.String("status", string(prior.Status)), zap.String("user", MaskUser(m.UserID)))
	force := commands.Command{Kind: commands.KindRun, Workflow: c.Workflow, Args: c.Args, Force: true}.String()
	resume := commands.Command{Kind: commands.KindResume, RunID: prior.ID}.String()
	abandon := commands.Command{Kind: commands.KindAbandon, RunID: prior.ID}.String()
	t := conversation.T(conversation.P("Nothing was started: run "), conversation.C(prior.ID), conversation.P(" of "),
		conversation.C(prior.Workflow), conversation.P(" in this conversation is "), conversation.B(string(prior.Status)))
	t = t.Append(priorDetail(prior)...)
	t = t.Append(conversation.P(".\nIt was started with: "), conversation.U(conversation.Preview(prior.UserMessage, previewRunes)),
		conversation.P("\nChoose one:\n"))
	var buttons []conversation.Button
	if gate := prior.Meta.Pause; prior.Status == db.StatusPaused && gate != nil && gate.Kind.IsGate() {
		var first []conversation.Span
		first, buttons = answerChoice(b.gateOffer(ctx, m, prior))
		t = t.Append(first...)
	} else {
		buttons = []conversation.Button{{Label: "Resume", Command: resume, Style: conversation.StylePrimary}}
		t = t.Append(conversation.P("• "), conversation.C(resume), conversation.P(" - continue that run where it stopped (it re-runs its original request)\n"))
	}
	t = t.Append(conversation.P("• "), conversation.C(abandon), conversation.P(" then run again - discard it and start fresh\n"),
		conversation.P("• "), conversation.C(force), conversation.P(" - start fresh with your new arguments and leave the old run as it is"))
	b.reply(ctx, m, t, append(buttons,
		conversation.Button{Label: "Abandon", Command: abandon, Style: conversation.StyleDanger},
		conversation.Button{Label: "Start fresh", Command: force})...)
}

// answerChoice is the resume gate's first choice for a run waiting at a gate: answering it, as far
// as the person may (offer). A requester whom the gate does not let approve is offered Reject and
// told who may approve.
func answerChoice(offer reporting.GateOffer) ([]conversation.Span, []conversation.Button) {
	id := offer.Run.ID
	approve, reject := commands.Command{Kind: commands.KindApprove, RunID: id}.String(), commands.Command{Kind: commands.KindReject, RunID: id}.String()
	switch {
	case offer.MayApprove():
		return []conversation.Span{conversation.P("• "), conversation.C(approve), conversation.P(" or "), conversation.C(reject),
			conversation.P(" - answer its gate and let it continue\n")}, []conversation.Button{{Label: "Approve", Command: approve, Style: conversation.StylePrimary}}
	case offer.MayReject():
		out := []conversation.Span{conversation.P("• "), conversation.C(reject), conversation.P(" - reject its gate. ")}
		out = append(out, offer.Instead("")...)
		return append(out, conversation.P("\n")), []conversation.Button{{Label: "Reject", Command: reject, Style: conversation.StyleDanger}}
	}
	return append([]conversation.Span{conversation.P("• ")}, append(offer.Instead(""), conversation.P("\n"))...), nil
}

func priorDetail(r db.Run) []conversation.Span {
	if p := r.Meta.Pause; r.Status == db.StatusPaused && p != nil && p.Node != "" {
		return []conversation.Span{conversation.P(" at "), conversation.C(p.Node)}
	}
	if e := r.Meta.LastError; e != nil && e.Node != "" {
		return []conversation.Span{conversation.P(" (node "), conversation.C(e.Node), conversation.P(")")}
	}
	return nil
}

func (b *Dispatcher) unknownWorkflow(ctx context.Context, m conversation.Message, name string, names []string) {
	t := conversation.T(conversation.P("There is no workflow named "), conversation.U(name), conversation.P("."))
	if close := commands.Closest(name, names, 3); len(close) > 0 {
		t = t.Append(conversation.P(" Did you mean "))
		for i, n := range close {
			if i > 0 {
				t = t.Append(conversation.P(", "))
			}
			t = t.Append(conversation.C(n))
		}
		t = t.Append(conversation.P("?"))
	}
	b.reply(ctx, m, t.Append(conversation.P(" "), conversation.C("/workflow list"), conversation.P(" shows them all.")))
}
