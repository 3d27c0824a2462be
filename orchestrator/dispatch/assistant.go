package dispatch

import (
	"context"
	"errors"
	"sync"

	"go.uber.org/zap"

	"threadflow/agent"
	"threadflow/conversation"
	"threadflow/db"
	"threadflow/orchestrator/execution"
)

// Assistant answers free text addressed to the bot with the conversation's AI session.
type Assistant struct {
	Providers   execution.Providers
	DefaultName string // DEFAULT_PROVIDER; empty turns the assistant off

	turnsOnce sync.Once
	turns     chan struct{} // one token per answer being written (maxAssistantTurns)
}

// maxAssistantTurns bounds how many free-text answers one process writes at once. Each is an agent
// CLI process of 100-250 MB, and the Inbox hands a burst of messages to up to 256 handlers per
// platform: a burst of chat would otherwise start as many CLIs. A message over the bound waits for
// an answer to finish, holding up only its own conversation (whose messages are handled in order).
const maxAssistantTurns = 8

// turn waits for one of maxAssistantTurns and returns its release, or ctx's error.
func (a *Assistant) turn(ctx context.Context) (release func(), err error) {
	a.turnsOnce.Do(func() { a.turns = make(chan struct{}, maxAssistantTurns) })
	select {
	case a.turns <- struct{}{}:
		return func() { <-a.turns }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// assistant answers a message that is neither a command nor a gate answer. A stale session is
// cleared (never persisted), the message is answered by a fresh session once, and the new session
// is stored: there is no path by which one expired session fails every later message.
func (b *Dispatcher) assistant(ctx context.Context, m conversation.Message, text string) {
	if b.Assistant.DefaultName == "" || text == "" {
		b.reply(ctx, m, conversation.T(conversation.P("I run workflows: "), conversation.C("/workflow help"),
			conversation.P(" lists the commands. (Free-text chat is off: set DEFAULT_PROVIDER to claude or codex to turn it on.)")))
		return
	}
	p, err := b.Assistant.Providers.Provider("")
	if err != nil {
		b.reply(ctx, m, conversation.T(conversation.P("The assistant is not available: "+err.Error())))
		return
	}
	conv := m.ConversationID()
	dir, err := b.Dirs.ConversationDir(conv)
	if err != nil {
		b.internalError(ctx, m, "prepare the assistant", err)
		return
	}
	session := ""
	if s, err := b.Store.GetSession(ctx, conv, "", ""); err == nil {
		session = s.SessionID
	}
	release, err := b.Assistant.turn(ctx)
	if err != nil {
		return // shutting down
	}
	defer release()
	req := agent.Request{Prompt: text, SessionID: session, Dir: dir}
	res, err := p.Run(ctx, req)
	var note conversation.Text
	if err != nil && session != "" && agent.ClassOf(err) == db.ClassStaleSession {
		b.Log.Info("orchestrator.session_reset_completed", zap.String("conversation", conv), zap.String("provider", p.Name()))
		b.storeConversationSession(ctx, conv, p.Name(), "")
		note = conversation.T(conversation.P("(The previous AI session had expired; this answer starts a fresh one.)\n"))
		req.SessionID = ""
		res, err = p.Run(ctx, req)
	}
	if err != nil {
		b.reply(ctx, m, assistantError(err))
		return
	}
	b.storeConversationSession(ctx, conv, p.Name(), res.SessionID)
	b.reply(ctx, m, note.Append(conversation.O(res.Text)))
}

func assistantError(err error) conversation.Text {
	msg := "The assistant could not answer"
	var ae *agent.Error
	if errors.As(err, &ae) && ae.Msg != "" {
		msg += ": " + ae.Msg
	}
	return conversation.T(conversation.P(msg + ". Your next message will try again."))
}

func (b *Dispatcher) storeConversationSession(ctx context.Context, conv, provider, id string) {
	if err := b.Store.SetSession(ctx, db.Session{ConversationID: conv, Provider: provider, SessionID: id}); err != nil {
		b.Log.Warn("orchestrator.session_save_failed", zap.String("conversation", conv), zap.Error(err))
	}
}
