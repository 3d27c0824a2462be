package dispatch

import (
	"context"
	"errors"
	"strings"
	"time"

	"go.uber.org/zap"

	"threadflow/commands"
	"threadflow/conversation"
	"threadflow/db"
	"threadflow/orchestrator/execution"
	"threadflow/orchestrator/reporting"
	"threadflow/workflow"
)

// Catalogs gives the current workflow catalog. Discovery re-reads directories, so the bot asks for
// it per command and picks up new files without a restart.
type Catalogs interface {
	Catalog() *workflow.Catalog
}

// RunWorkers is what the dispatcher needs from the local workers.
type RunWorkers interface {
	Wake()
	Stop(runID string)
}

// Dispatcher turns inbound chat messages into commands, gate answers and assistant turns, the same
// for every platform. It implements conversation.Handler. It never executes a run
// itself: it creates, resumes, answers or cancels runs with one store compare-and-set each and wakes
// the workers, so the resume gate and the state machine are enforced in exactly one place.
type Dispatcher struct {
	Store     Store
	Catalogs  Catalogs
	Reporter  *reporting.Reporter
	Workers   RunWorkers
	Auth      Auth
	Dirs      execution.Dirs
	Assistant Assistant
	Log       *zap.Logger
	Observe   execution.Observer
	Limits    commands.Limits         // checked on every message before anything about it is written
	Groups    map[string]GroupMembers // by platform name: who is in a group of people there (Slack user groups)

	known knownSet // conversations this process recorded
}

// Handle handles one message. Messages of one conversation arrive in order (conversation.Inbox).
func (b *Dispatcher) Handle(ctx context.Context, m conversation.Message) {
	if !b.Auth.Permits(m.UserID) {
		b.Log.Info("orchestrator.message_ignored", zap.String("reason", "user not allowed"), zap.String("user", MaskUser(m.UserID)))
		if m.Action != nil {
			b.replyEphemeral(ctx, m, conversation.T(conversation.P("You are not allowed to use this bot; ask an admin to add your id to ALLOWED_USER_IDS. Nothing was changed.")))
		}
		return
	}
	start, kind := time.Now(), "ignored"
	defer func() { execution.ObserverOr(b.Observe).Dispatched(kind, time.Since(start)) }()
	if err := b.Limits.Check(m.Text); err != nil {
		kind = "refused"
		b.refuse(ctx, m, err)
		return
	}
	text := strings.TrimSpace(m.Text)
	switch {
	case commands.IsCommand(text):
		kind = "command"
		b.command(ctx, m, text)
	case b.answerGate(ctx, m, text):
		kind = "gate_answer"
	case m.Addressed():
		kind = "assistant"
		b.assistant(ctx, m, text)
	}
}

// refuse answers a message a limit refused, before anything about it was written: a command, a
// message to the bot, or a reply in the thread of a run waiting at a gate. Other channel chatter
// was not meant for the bot and is refused silently.
func (b *Dispatcher) refuse(ctx context.Context, m conversation.Message, err error) {
	b.Log.Info("orchestrator.message_refused", zap.String("user", MaskUser(m.UserID)), zap.Error(err))
	meant := m.Addressed() || commands.IsCommand(strings.TrimSpace(m.Text))
	if !meant && m.ThreadID != "" {
		var err error
		if _, meant, err = b.waitingRun(ctx, m); err != nil { // unknown: treated as not meant for the bot
			b.Log.Warn("orchestrator.waiting_run_lookup_failed", zap.String("conversation", m.ConversationID()), zap.Error(err))
		}
	}
	if meant {
		b.reply(ctx, m, conversation.T(conversation.P(err.Error())))
	}
}

func (b *Dispatcher) command(ctx context.Context, m conversation.Message, text string) {
	c, err := commands.Parse(text)
	if err != nil {
		var pe *commands.ParseError
		msg := err.Error()
		if errors.As(err, &pe) && pe.Usage != "" {
			msg = pe.Msg + "\nUsage: " + pe.Usage
		}
		b.reply(ctx, m, conversation.T(conversation.P(msg)))
		return
	}
	switch c.Kind {
	case commands.KindRun:
		b.runCommand(ctx, m, c)
	case commands.KindResume:
		b.resume(ctx, m, c)
	case commands.KindAbandon, commands.KindCancel:
		b.abandon(ctx, m, c)
	case commands.KindApprove:
		b.decide(ctx, m, c, db.DecisionApprove)
	case commands.KindReject:
		b.decide(ctx, m, c, db.DecisionReject)
	case commands.KindStatus:
		b.status(ctx, m, c)
	case commands.KindList:
		b.list(ctx, m)
	case commands.KindReset:
		b.reset(ctx, m)
	default:
		b.reply(ctx, m, conversation.T(conversation.P(commands.Help())))
	}
}

// reply answers in the message's conversation.
func (b *Dispatcher) reply(ctx context.Context, m conversation.Message, t conversation.Text, buttons ...conversation.Button) {
	b.Reporter.Post(ctx, m.Address, conversation.Reply{Text: t, Buttons: buttons})
}

// replyEphemeral answers only the sender where the platform can.
func (b *Dispatcher) replyEphemeral(ctx context.Context, m conversation.Message, t conversation.Text) {
	b.Reporter.Post(ctx, m.Address, conversation.Reply{Text: t, Ephemeral: true, ToUser: m.UserID})
}

// settle edits the message whose button was clicked so it shows the decision and who made it,
// without buttons: nobody can click a stale choice later.
func (b *Dispatcher) settle(ctx context.Context, m conversation.Message, t conversation.Text) {
	if m.Action == nil {
		return
	}
	b.Reporter.Edit(ctx, m.Action.Ref, conversation.Reply{Text: t})
}

// resolveRun finds the run a typed id or prefix names (FindRun), answering the user when it cannot.
func (b *Dispatcher) resolveRun(ctx context.Context, m conversation.Message, prefix string) (db.Run, bool) {
	run, err := FindRun(ctx, b.Store, prefix)
	var miss *RunLookupError
	switch {
	case errors.As(err, &miss):
		b.reply(ctx, m, miss.Text(conversation.T(conversation.C("/workflow status"), conversation.P(" lists this conversation's runs."))))
		return db.Run{}, false
	case err != nil:
		b.internalError(ctx, m, "look up run", err)
		return db.Run{}, false
	}
	return run, true
}

// internalError logs the details and tells the user a short, safe sentence.
func (b *Dispatcher) internalError(ctx context.Context, m conversation.Message, action string, err error) {
	b.Log.Error("orchestrator.command_failed", zap.String("action", action), zap.Error(err))
	msg := StoreErrorText(action, err)
	b.reply(ctx, m, conversation.T(conversation.P(msg)))
}

// StoreErrorText is the one sentence a person is told when an action failed on the store, in chat
// and in the terminal alike; the details go to the log, not to the person.
func StoreErrorText(action string, err error) string {
	switch {
	case errors.Is(err, db.ErrUnavailable):
		return "The database is not answering right now; nothing was changed. Please try again in a moment."
	case errors.Is(err, db.ErrUnwritable):
		// Trying again does not help: someone has to free space or fix the database.
		return "The bot's database cannot store anything right now (its disk is full or it is read-only), so nothing was changed. " +
			"Ask whoever runs the bot to fix it: its /readyz page says what is wrong."
	}
	return "Something went wrong while trying to " + action + "; nothing was changed. Please try again."
}
