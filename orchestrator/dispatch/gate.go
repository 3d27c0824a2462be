package dispatch

import (
	"context"
	"errors"

	"go.uber.org/zap"

	"threadflow/commands"
	"threadflow/conversation"
	"threadflow/db"
	"threadflow/orchestrator/execution"
	"threadflow/orchestrator/reporting"
)

// gateInput is one person's answer to a gate, from whichever path it came: a reply in the thread,
// a button, `/workflow approve|reject`, the dashboard or the CLI. Every path goes through
// resolveGate, and the store decides (db.JudgeGate) whether that person may give it.
type gateInput struct {
	decision db.GateDecision
	text     string // note, reason or loop feedback
	reply    int64  // the answer quotes this recorded reply instead of text (--reply N)
}

// answerGate treats a message in a paused run's thread (or, on platforms without threads, its
// conversation) as an answer to the run's gate, and reports whether it was one. The reply is read
// conservatively (commands.ReadAnswer): a clear yes approves and a clear no rejects, each with the
// words after it as note or reason; anything else changes nothing and is asked back with buttons
// that quote it. An interactive loop takes every other reply as feedback for its next round. An
// answer is an explicit resume of that run id, never a new dispatch.
func (b *Dispatcher) answerGate(ctx context.Context, m conversation.Message, text string) bool {
	run, ok, err := b.waitingRun(ctx, m)
	if err != nil {
		b.internalError(ctx, m, "find the run waiting for an answer here", err)
		return true
	}
	if !ok {
		return false
	}
	a := commands.ReadAnswer(text)
	if run.Meta.Pause.Kind == db.PauseLoop {
		b.resolveGate(ctx, m, run, loopAnswer(a, text))
		return true
	}
	switch a.Intent {
	case commands.IntentApprove:
		b.resolveGate(ctx, m, run, gateInput{decision: db.DecisionApprove, text: a.Note})
	case commands.IntentReject:
		b.resolveGate(ctx, m, run, gateInput{decision: db.DecisionReject, text: a.Note})
	default:
		b.askBack(ctx, m, run, text, a.Why)
	}
	return true
}

// loopAnswer reads a reply at an interactive loop's gate: a bare yes ends the loop, a bare no stops
// the run, and everything else, including "no, use X instead", is feedback for the next round.
func loopAnswer(a commands.Answer, text string) gateInput {
	switch {
	case a.Intent == commands.IntentApprove && a.Note == "":
		return gateInput{decision: db.DecisionApprove}
	case a.Intent == commands.IntentReject && a.Note == "":
		return gateInput{decision: db.DecisionReject}
	}
	return gateInput{decision: db.DecisionAnswer, text: text}
}

// askBack answers an unclear reply: it records the reply, says what could not be decided, quotes
// the reply and offers to approve or reject with it, changing nothing until someone allowed clicks.
func (b *Dispatcher) askBack(ctx context.Context, m conversation.Message, run db.Run, text, why string) {
	p := run.Meta.Pause
	ev, err := b.Store.RecordGateReply(ctx, run.ID, p.Node, db.GateReplyData{By: m.UserID, Text: text})
	if err != nil {
		var te *db.TransitionError
		if errors.As(err, &te) { // answered or abandoned while this reply was on its way
			b.refused(ctx, m, run, string(db.DecisionApprove), err)
			return
		}
		b.internalError(ctx, m, "record your reply", err)
		return
	}
	b.Log.Info("orchestrator.gate_reply_unclear", zap.String("run_id", run.ID), zap.String("user", MaskUser(m.UserID)))
	t, buttons := reporting.AskBackMessage(run, text, why, ev.Seq, b.gateOffer(ctx, m, run))
	b.Reporter.AskBack(ctx, run, m.Address, ev.Seq, conversation.Reply{Text: t, Buttons: buttons})
}

// waitingRun finds the newest run paused at a gate whose thread this message is in.
func (b *Dispatcher) waitingRun(ctx context.Context, m conversation.Message) (db.Run, bool, error) {
	runs, err := b.Store.ListRuns(ctx, db.RunFilter{Statuses: []db.Status{db.StatusPaused}, ConversationID: m.ConversationID(), Limit: 10})
	if err != nil {
		return db.Run{}, false, err
	}
	for _, r := range runs {
		if db.AskedGate(r) != "" {
			return r, true, nil
		}
	}
	return db.Run{}, false, nil
}

// resolveGate gives one answer to the gate the run waits at. The store decides whether this person
// may give it and whether it opens the gate; what happened is said where it was asked and in the
// run's thread.
func (b *Dispatcher) resolveGate(ctx context.Context, m conversation.Message, run db.Run, a gateInput) {
	groups, ok := b.approverGroups(ctx, m, run)
	if !ok {
		return
	}
	res, err := b.Store.ResolveGate(ctx, db.GateResolution{RunID: run.ID, Node: db.AskedGate(run), Decision: a.decision,
		By: m.UserID, Name: conversation.DisplayName(m.UserName), Admin: b.Auth.IsAdmin(m.UserID), MemberOf: groups, Via: m.Via, Text: a.text, ReplySeq: a.reply,
		Owe: b.Reporter.AnswerOwed(ctx, run, m.Sender())})
	if err != nil {
		b.gateRefused(ctx, m, run, a, err)
		return
	}
	log := b.Log.With(zap.String("run_id", run.ID), zap.String("node", res.Node), zap.String("decision", string(a.decision)),
		zap.String("user", MaskUser(m.UserID)))
	if !res.Resolved {
		log.Info("orchestrator.gate_approval_counted", zap.Int("approvals", len(res.Approvals)), zap.Int("required", res.Required))
		t := reporting.ApprovalCountedText(res, m.Sender())
		if m.Action == nil && m.ConversationID() != res.Run.ConversationID {
			b.reply(ctx, m, t)
		}
		b.Reporter.Wake()
		return
	}
	log.Info("orchestrator.gate_resolved")
	t := reporting.GateDecisionText(res, m.Sender())
	b.settle(ctx, m, t)
	if m.Action == nil && m.ConversationID() != res.Run.ConversationID {
		b.reply(ctx, m, t) // answered from elsewhere: confirm there too
	}
	b.Reporter.Wake()
	if a.decision == db.DecisionReject {
		execution.ObserverOr(b.Observe).RunStopped(res.Run.Workflow, res.Run.Status)
		b.Reporter.Notify(ctx, execution.Notice{Kind: execution.NoticeCancelled, Run: res.Run}) // the status with every node as the end left it
		return
	}
	b.Workers.Wake()
}

// gateOffer is what the sender may answer at run's gate, with the groups of its approvers they are
// in; a group that cannot be read counts as one they are not in, so nothing is offered on an
// unknown answer.
func (b *Dispatcher) gateOffer(ctx context.Context, m conversation.Message, run db.Run) reporting.GateOffer {
	var groups []string
	if p := run.Meta.Pause; p != nil && p.Gate != nil {
		var err error
		if groups, err = b.memberOf(ctx, m.Sender(), p.Answerers()); err != nil {
			b.Log.Debug("orchestrator.gate_offer_group_unread", zap.String("run_id", run.ID), zap.Error(err))
		}
	}
	return b.Auth.GateOffer(run, m.UserID, groups...)
}

// approverGroups are the groups of the gate's approvers the sender is in, checked now. When a group
// cannot be read and the sender is not let in otherwise, the answer is refused and they are told
// why; ok is false then and nothing was written.
func (b *Dispatcher) approverGroups(ctx context.Context, m conversation.Message, run db.Run) ([]string, bool) {
	p := run.Meta.Pause
	if p == nil || p.Gate == nil {
		return nil, true
	}
	groups, err := b.memberOf(ctx, m.Sender(), p.Answerers())
	var lookup *GroupLookupError
	admins := p.Gate.Admins || (p.Widened() && p.Gate.EscalateAdmins)
	if !errors.As(err, &lookup) || (admins && b.Auth.IsAdmin(m.UserID)) || p.Answerers().Includes(m.UserID, groups) {
		return groups, true
	}
	b.Log.Warn("orchestrator.group_lookup_failed", zap.String("run_id", run.ID), zap.String("group", lookup.Group), zap.Error(lookup.Err))
	b.replyEphemeral(ctx, m, conversation.T(conversation.P("You may not answer gate "), conversation.C(p.Node), conversation.P(" of run "), conversation.C(run.ID),
		conversation.P(" right now: the people it names include "), conversation.C(lookup.Group), conversation.P(", and whether you are in it could not be checked, so you are refused. Nothing was changed; try again in a moment.")))
	return nil, false
}

// gateRefused tells the person why their answer changed nothing: they may not give it, they quoted
// an old reply, or the gate was already answered or is not there.
func (b *Dispatcher) gateRefused(ctx context.Context, m conversation.Message, run db.Run, a gateInput, err error) {
	var re *db.GateRefusedError
	switch {
	case errors.As(err, &re):
		b.Log.Info("orchestrator.gate_answer_refused", zap.String("run_id", run.ID), zap.String("reason", string(re.Reason)),
			zap.String("user", MaskUser(m.UserID)))
		b.replyEphemeral(ctx, m, reporting.GateRefusalText(re, b.gateOffer(ctx, m, run)))
	case errors.Is(err, db.ErrStaleReply):
		b.replyEphemeral(ctx, m, conversation.T(conversation.P("That reply was made before the gate asked its current question, so it cannot answer it; nothing was changed. Answer the question in the latest message of run "),
			conversation.C(run.ID), conversation.P(".")))
	default:
		b.refused(ctx, m, run, string(a.decision), err)
	}
}
