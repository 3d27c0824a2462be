package dispatch

import (
	"context"
	"errors"
	"fmt"

	"go.uber.org/zap"

	"threadflow/commands"
	"threadflow/conversation"
	"threadflow/db"
	"threadflow/orchestrator/execution"
	"threadflow/orchestrator/reporting"
)

// resume is the explicit `/workflow resume ID`. It carries the run id and lets the store's resume
// compare-and-set be the single place that claims the run: no prompt, no fresh run, and of two
// concurrent resumes exactly one proceeds.
func (b *Dispatcher) resume(ctx context.Context, m conversation.Message, c commands.Command) {
	run, ok := b.resolveRun(ctx, m, c.RunID)
	if !ok {
		return
	}
	if !b.Auth.MayControl(m.UserID, run) {
		b.notOwner(ctx, m, run, "resume")
		return
	}
	if t, refuse := b.freshRefusal(ctx, run, c.FreshWorkspace); refuse {
		b.replyEphemeralOrReply(ctx, m, t)
		return
	}
	resume, where := b.Store.ResumeRun, " where it stopped"
	if c.FreshWorkspace {
		resume, where = b.Store.ResumeFresh, " from its first node in a fresh workspace"
	}
	t := conversation.T(conversation.P("Resuming run "), conversation.C(run.ID), conversation.P(" of "), conversation.C(run.Workflow),
		conversation.P(where+" (requested by "), m.Sender().Span(), conversation.P(")."))
	b.rereadBudgets(ctx, m, run)
	// The resume owes the thread its note and a fresh status message, recorded with it: they go out
	// before anything a worker reports on the resumed run.
	resumed, err := resume(ctx, run.ID, db.Actor{ID: m.UserID, Via: m.Via}, b.Reporter.Resumed(t))
	if err != nil {
		b.refused(ctx, m, run, "resume", err)
		return
	}
	b.Log.Info("orchestrator.run_resume_requested", zap.String("run_id", run.ID), zap.String("from", string(run.Status)), zap.String("user", MaskUser(m.UserID)),
		zap.Bool("fresh_workspace", c.FreshWorkspace))
	b.settle(ctx, m, t)
	if m.ConversationID() != resumed.ConversationID {
		b.reply(ctx, m, t) // asked from elsewhere: answer there too, the thread gets the status below
	}
	b.Reporter.Wake()
	b.Workers.Wake()
}

// freshRefusal decides --fresh-workspace: it is the only resume of a run whose workspace is lost,
// one choice of two for a run whose WORKSPACE_REMOTE did not answer (a plain resume tries it
// again), and is refused for any other run (it would throw away work a plain resume keeps). refuse
// is true with the text to answer when the resume must not go ahead.
func (b *Dispatcher) freshRefusal(ctx context.Context, run db.Run, fresh bool) (t conversation.Text, refuse bool) {
	lost := b.workspaceLost(ctx, run)
	unreachable := run.Status == db.StatusPaused && run.Meta.Pause != nil && run.Meta.Pause.WorkspaceUnreachable
	id := conversation.C(run.ID)
	switch {
	case lost && !fresh:
		p := run.Meta.Pause
		return conversation.T(conversation.P("Run "), id, conversation.P(" cannot continue where it stopped: "+p.Error+". "),
			conversation.C(commands.Command{Kind: commands.KindResume, RunID: run.ID, FreshWorkspace: true}.String()),
			conversation.P(" runs it again from its first node with the same arguments; "),
			conversation.C(commands.Command{Kind: commands.KindAbandon, RunID: run.ID}.String()), conversation.P(" discards it.")), true
	case fresh && !lost && !unreachable:
		return conversation.T(conversation.P("Run "), id, conversation.P(" still has its workspace, so "),
			conversation.C("--fresh-workspace"), conversation.P(" is not needed (it would throw its work away): "),
			conversation.C(commands.Command{Kind: commands.KindResume, RunID: run.ID}.String()),
			conversation.P(" continues it where it stopped. Nothing else happened.")), true
	}
	return nil, false
}

// workspaceLost reports whether the run paused because its workspace is lost, and it still is: its
// branch is gone from WORKSPACE_REMOTE (any replica that claims the run finds it so), its directory
// is gone from this process's own home, or no live process sees the home that held it (one that
// came back makes a plain resume work again).
func (b *Dispatcher) workspaceLost(ctx context.Context, run db.Run) bool {
	if p := run.Meta.Pause; run.Status != db.StatusPaused || p == nil || !p.WorkspaceLost {
		return false
	}
	if run.WorkspaceRemote != "" {
		return true
	}
	if run.WorkspaceHome == "" || run.WorkspaceHome == b.Dirs.Token {
		return !execution.WorkingDirExists(run)
	}
	homes, err := b.Store.LiveHomes(ctx)
	if err != nil {
		b.Log.Warn("orchestrator.homes_unread", zap.Error(err))
		return true // a plain resume would only pause again; the person can retry
	}
	for _, h := range homes {
		if run.WorkspaceHome != "" && h.Token == run.WorkspaceHome {
			return false
		}
	}
	return true
}

// abandon moves a run to cancelled: failed, paused, queued and running runs alike. `/workflow
// abandon` discards a run for good, `/workflow cancel` stops one; they differ only in how they are
// said. A running run's processes are stopped here when this replica runs it, and by the lost
// lease elsewhere.
func (b *Dispatcher) abandon(ctx context.Context, m conversation.Message, c commands.Command) {
	var run db.Run
	ok := false
	if c.RunID == "" {
		run, ok = b.latestActive(ctx, m)
	} else {
		run, ok = b.resolveRun(ctx, m, c.RunID)
	}
	if !ok {
		return
	}
	verb := string(c.Kind) // "abandon" or "cancel"
	if !b.Auth.MayControl(m.UserID, run) {
		b.notOwner(ctx, m, run, verb)
		return
	}
	t := stoppedText(c.Kind, run, m.Sender())
	n := execution.Notice{Kind: execution.NoticeCancelled, Text: t, By: m.UserID}
	cancelled, err := b.Store.CancelRun(ctx, run.ID, db.Actor{ID: m.UserID, Via: m.Via}, pastTense(verb), b.Reporter.Owing(n))
	if err != nil {
		b.refused(ctx, m, run, verb, err)
		return
	}
	b.Workers.Stop(run.ID)
	execution.ObserverOr(b.Observe).RunStopped(cancelled.Workflow, cancelled.Status)
	b.Log.Info("orchestrator.run_abandoned", zap.String("run_id", run.ID), zap.String("how", verb), zap.String("user", MaskUser(m.UserID)))
	// One message for one event: the run's conversation is told by the notice, and where it was
	// asked from only when that is elsewhere (a click there shows it on the message clicked).
	b.settle(ctx, m, t)
	if m.Action == nil && m.ConversationID() != cancelled.ConversationID {
		b.reply(ctx, m, t)
	}
	n.Run = cancelled
	b.Reporter.Notify(ctx, n)
}

// stoppedText says that a run was abandoned or cancelled, by whom, and from which status: abandon
// discards a run, cancel stops one (and what it was running).
func stoppedText(k commands.Kind, run db.Run, by conversation.Person) conversation.Text {
	what := "Abandoned run "
	if k == commands.KindCancel {
		what = "Cancelled run "
	}
	t := conversation.T(conversation.P(what), conversation.C(run.ID), conversation.P(" of "), conversation.C(run.Workflow),
		conversation.P(" (was "+string(run.Status)+"; by "), by.Span(), conversation.P(")"))
	if run.Status == db.StatusRunning {
		t = t.Append(conversation.P(": what it was running is stopped"))
	}
	return t.Append(conversation.P(". A new "), conversation.C("/workflow run "+run.Workflow), conversation.P(" starts fresh."))
}

// latestActive finds the newest queued, running or paused run of this conversation for
// `/workflow cancel` without an id.
func (b *Dispatcher) latestActive(ctx context.Context, m conversation.Message) (db.Run, bool) {
	runs, err := b.conversationRuns(ctx, m, []db.Status{db.StatusQueued, db.StatusRunning, db.StatusPaused})
	if err != nil {
		b.internalError(ctx, m, "list runs", err)
		return db.Run{}, false
	}
	if len(runs) == 0 {
		b.reply(ctx, m, conversation.T(conversation.P("No run is active in this conversation; give the run id: "), conversation.C("/workflow cancel ID")))
		return db.Run{}, false
	}
	return runs[0], true
}

// notOwner refuses to resume or abandon someone else's run.
func (b *Dispatcher) notOwner(ctx context.Context, m conversation.Message, run db.Run, action string) {
	b.replyEphemeral(ctx, m, conversation.T(conversation.P("Only the run's owner ("), reporting.Requester(run).Span(),
		conversation.P(") or an admin (ADMIN_USER_IDS) may "+action+" run "), conversation.C(run.ID), conversation.P(". Nothing was changed.")))
}

// decide answers a paused gate by command or button: approve resumes the run (an explicit resume
// of that run id, never a new dispatch), reject cancels it.
func (b *Dispatcher) decide(ctx context.Context, m conversation.Message, c commands.Command, d db.GateDecision) {
	run, ok := b.resolveRun(ctx, m, c.RunID)
	if !ok {
		return
	}
	b.resolveGate(ctx, m, run, gateInput{decision: d, text: c.Text, reply: c.Reply})
}

// refused explains why a transition did not happen, from the status the store actually found.
func (b *Dispatcher) refused(ctx context.Context, m conversation.Message, run db.Run, action string, err error) {
	var te *db.TransitionError
	var ge *db.GateResolvedError
	var t conversation.Text
	switch {
	case errors.As(err, &ge):
		t = conversation.T(conversation.P("That gate was already answered: " + string(ge.Decision) + " by ")).Append(reporting.AnsweredBy(conversation.Person{ID: ge.By, Name: ge.ByName})...).
			Append(conversation.P(". Nothing else happened."))
	case errors.As(err, &te):
		t = refusalText(b.gateOffer(ctx, m, run), action, te.Found)
	default:
		b.internalError(ctx, m, action+" the run", err)
		return
	}
	b.replyEphemeralOrReply(ctx, m, t)
}

// refusalText says why action did not happen to the run of offer, which the store found in the
// status found; a run waiting at a gate is answered, as far as the person asking may (offer).
func refusalText(offer reporting.GateOffer, action string, found db.Status) conversation.Text {
	run := offer.Run
	id := conversation.C(run.ID)
	switch {
	case found == db.StatusQueued || found == db.StatusRunning:
		if action == "resume" {
			return conversation.T(conversation.P("Run "), id, conversation.P(" is already being resumed (it is "+string(found)+"). Nothing else happened."))
		}
		return conversation.T(conversation.P("Run "), id, conversation.P(" is "+string(found)+", not waiting at a gate. Nothing else happened."))
	case found == db.StatusPaused && action == "resume" && !offer.MayApprove():
		return conversation.T(conversation.P("Run "), id, conversation.P(" is waiting at a gate, which resuming does not answer. ")).
			Append(offer.Instead(commands.Command{Kind: commands.KindReject, RunID: run.ID}.String() + " [reason]")...)
	case found == db.StatusPaused && action == "resume":
		return conversation.T(conversation.P("Run "), id, conversation.P(" is waiting at a gate: answer it with "),
			conversation.C("/workflow approve "+run.ID), conversation.P(" or "), conversation.C("/workflow reject "+run.ID), conversation.P("."))
	case found.Terminal():
		return conversation.T(conversation.P("Run "), id, conversation.P(" is "+string(found)+"; there is nothing to "+action+". Start a new one with "),
			conversation.C("/workflow run "+run.Workflow), conversation.P("."))
	}
	return conversation.T(conversation.P(fmt.Sprintf("Run %s is %s, so it cannot be %s. ", run.ID, found, pastTense(action))),
		conversation.C("/workflow status "+run.ID), conversation.P(" shows where it is."))
}

func pastTense(action string) string {
	switch action {
	case "approve":
		return "approved"
	case "reject":
		return "rejected"
	case "abandon":
		return "abandoned"
	case "cancel":
		return "cancelled"
	}
	return action + "d"
}

// replyEphemeralOrReply answers a click privately (the clicker made the mistake, not the thread) and
// a typed command in the conversation.
func (b *Dispatcher) replyEphemeralOrReply(ctx context.Context, m conversation.Message, t conversation.Text) {
	if m.Action != nil {
		b.replyEphemeral(ctx, m, t)
		return
	}
	b.reply(ctx, m, t)
}
