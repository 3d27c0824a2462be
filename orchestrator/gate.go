package orchestrator

import (
	"context"

	"threadflow/commands"
	"threadflow/conversation"
	"threadflow/db"
)

// answerGate treats a message in a paused run's thread (or, on platforms without threads, its
// conversation) as an answer to the run's gate. It reports whether the message was such an answer.
// Clear approvals and rejections resolve the gate; on a gate that captures a response, or an
// interactive loop, any other text is the answer; on a plain gate anything unclear gets the exact
// commands and changes nothing. An answer is an explicit resume of that run id, never a new dispatch.
func (b *Bot) answerGate(ctx context.Context, m conversation.Message, text string) bool {
	run, ok := b.waitingRun(ctx, m)
	if !ok {
		return false
	}
	p := run.Meta.Pause
	switch commands.Classify(text) {
	case commands.IntentApprove:
		b.resolveGate(ctx, m, run, db.DecisionApprove, text)
	case commands.IntentReject:
		b.resolveGate(ctx, m, run, db.DecisionReject, text)
	default:
		if p.CaptureResponse || p.Kind == db.PauseLoop {
			b.resolveGate(ctx, m, run, db.DecisionAnswer, text)
			return true
		}
		b.reply(ctx, m, conversation.T(conversation.P("Run "), conversation.C(run.ID), conversation.P(" is waiting at "),
			conversation.C(p.Node), conversation.P(". I could not tell whether that was a yes or a no; nothing was changed. Reply "),
			conversation.C("approve"), conversation.P(" or "), conversation.C("reject"), conversation.P(", or use "),
			conversation.C("/workflow approve "+run.ID+" [comment]"), conversation.P(" / "), conversation.C("/workflow reject "+run.ID+" [reason]"), conversation.P(".")))
	}
	return true
}

// waitingRun finds the newest run paused at a gate whose thread this message is in.
func (b *Bot) waitingRun(ctx context.Context, m conversation.Message) (db.Run, bool) {
	runs, err := b.Store.ListRuns(ctx, db.RunFilter{Statuses: []db.Status{db.StatusPaused}, ConversationID: m.ConversationID(), Limit: 10})
	if err != nil {
		return db.Run{}, false
	}
	for _, r := range runs {
		if r.Meta.Pause != nil && r.Meta.Pause.Kind.IsGate() {
			return r, true
		}
	}
	return db.Run{}, false
}
