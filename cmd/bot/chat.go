package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"strings"
	"time"

	"go.uber.org/zap"

	"threadflow/adapters/console"
	"threadflow/conversation"
	"threadflow/db"
	"threadflow/orchestrator"
	"threadflow/orchestrator/dispatch"
	"threadflow/orchestrator/execution"
	"threadflow/orchestrator/reporting"
)

// remoteRunPoll is how often `bot chat` and `bot workflow` look whether a run they wait for
// stopped when another process executes it. Runs this process executes wake them as they end
// (Workers.Ended), so this only bounds the wait for the others.
const remoteRunPoll = 250 * time.Millisecond

// chatSession is `bot chat`: the terminal adapter. It talks to the bot as a chat user on the same
// database as the bot, so a conversation can be continued by a later call with the same
// --conversation, and tests drive the bot through it as a user would.
type chatSession struct {
	store  db.Store
	engine *orchestrator.Engine
	inbox  *conversation.Inbox
	at     conversation.Address
	user   string
	out    io.Writer // the terminal, where the bot's replies go
}

// chatHelp is `bot chat -h`, before the flags.
const chatHelp = `usage: bot chat [--conversation ID] [--thread ID] [--user NAME] [MESSAGE...]

Talks to the bot as a chat user, on the bot's database, and waits after each message until the runs
it started have stopped. Without messages, each line of standard input is one message. Type
/workflow help for the commands. Logs stay at warn unless LOG_LEVEL says otherwise.

Flags:`

func chat(ctx context.Context, inv invocation, args []string) error {
	fs := flag.NewFlagSet("chat", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	conv := fs.String("conversation", "local", "conversation `ID` to talk in; reuse it to continue a conversation")
	thread := fs.String("thread", "", "thread `ID` inside the conversation, such as a run id printed by the bot")
	user := fs.String("user", dispatch.LocalConsoleUser, "user `ID` to talk as (console:NAME)")
	fs.Usage = func() {} // -h prints the help below on stdout; a bad flag is reported as one line
	if err := fs.Parse(args); errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(inv.stdout, chatHelp)
		fs.SetOutput(inv.stdout)
		fs.PrintDefaults()
		return nil
	} else if err != nil {
		return &usageError{flagProblem(fs, err, "--") + "; bot chat -h lists the flags"}
	}
	if strings.Contains(*conv, ":") || strings.Contains(*thread, ":") {
		return &usageError{"--conversation and --thread may not contain ':'"}
	}
	who, err := consoleUser(*user)
	if err != nil {
		return err
	}
	cfg, log, st, err := openLocal(ctx, inv, "chat", nil) // configuration comes from the environment, as for the bot
	if err != nil {
		return err
	}
	defer func() { _ = log.Sync(); _ = st.Close() }()
	s := &chatSession{store: st, at: conversation.Address{Platform: console.Platform, ChannelID: *conv, ThreadID: *thread},
		user: who, out: inv.stdout, engine: terminalEngine(cfg, log, st, inv.stdout, inv.stderr)}
	return s.run(ctx, log, messages(fs.Args(), os.Stdin))
}

// consoleUser is the id the terminal acts as for --user NAME: console:NAME. The terminal proves no
// one's identity on another platform, so acting as one (slack:U…, web:alice) is refused: a gate
// listing a Slack approver could otherwise be answered by anyone with a shell on the bot's host.
func consoleUser(u string) (string, error) {
	name, rest, qualified := strings.Cut(u, ":")
	switch {
	case !qualified:
		return console.Platform + ":" + u, nil
	case name == console.Platform && rest != "":
		return u, nil
	}
	return "", &usageError{fmt.Sprintf("--user %s: the terminal acts only as console: names; %s is another platform's id, and the terminal cannot tell who that is. "+
		"Use --user NAME (console:NAME), or answer on that platform", u, u)}
}

// messages yields the arguments, or each line of stdin when there are none.
func messages(args []string, stdin io.Reader) func(yield func(string) bool) {
	return func(yield func(string) bool) {
		if len(args) > 0 {
			for _, a := range args {
				if !yield(a) {
					return
				}
			}
			return
		}
		sc := bufio.NewScanner(stdin)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			if line := strings.TrimSpace(sc.Text()); line != "" && !yield(line) {
				return
			}
		}
	}
}

// run sends each message in order and, after each, waits until every run of the conversation has
// stopped (paused, completed, failed or cancelled), so a following "lgtm" answers the gate the run
// reached. Then it shuts the engine down.
func (s *chatSession) run(ctx context.Context, log *zap.Logger, msgs func(func(string) bool)) error {
	// The runs of this conversation are this terminal's while it runs; a server takes them after.
	if err := attach(ctx, s.engine, s.at.ConversationID()); err != nil {
		return err
	}
	engineCtx, stopEngine := context.WithCancel(ctx)
	stopped := make(chan struct{})
	go func() { defer close(stopped); s.engine.Run(engineCtx) }()
	defer func() { stopEngine(); <-stopped }()
	s.inbox = conversation.NewInbox(s.engine.Dispatcher, s.store, 1, log)
	defer s.closeInbox(ctx)
	var err error
	msgs(func(text string) bool {
		err = s.send(ctx, text)
		return err == nil
	})
	return err
}

// chatStopGrace bounds how long an interrupted `bot chat` waits for the turns it cancelled to
// return; they return as soon as their CLI processes are killed.
const chatStopGrace = 10 * time.Second

// closeInbox lets the messages in hand finish, unless the command was interrupted (ctx ended): then
// the turns in progress are cancelled at once, which kills their CLIs, and waited for, so that no
// agent process outlives the command.
func (s *chatSession) closeInbox(ctx context.Context) {
	if ctx.Err() == nil {
		_ = s.inbox.Close(ctx)
		return
	}
	_ = s.inbox.Close(ctx) // ctx has ended: drops what is queued and cancels the running handlers
	wait, cancel := context.WithTimeout(context.WithoutCancel(ctx), chatStopGrace)
	defer cancel()
	_ = s.inbox.Close(wait) // waits until the cancelled handlers have returned
}

func (s *chatSession) send(ctx context.Context, text string) error {
	m := conversation.Message{Address: s.at, UserID: s.user, Text: text, Direct: true}
	if _, err := s.inbox.Submit(ctx, m); err != nil {
		return fmt.Errorf("send message: %w", err)
	}
	if err := s.inbox.Idle(ctx); err != nil {
		return err
	}
	return s.settle(ctx)
}

// settle waits until no run of this conversation is queued or running: woken by this process's
// executions as they end, and polling slowly for runs another process executes. A run it saw
// going that then ends cancelled was cancelled elsewhere (the message it waits after has been
// handled already): it says so, since nothing else tells this terminal.
func (s *chatSession) settle(ctx context.Context) error {
	t := time.NewTicker(remoteRunPoll)
	defer t.Stop()
	going := map[string]bool{}
	for {
		ended := s.engine.Workers.Ended()
		active, err := s.activeRuns(ctx)
		if err != nil {
			return err
		}
		for id := range going {
			if !active[id] {
				delete(going, id)
				if err := s.stopped(ctx, id); err != nil {
					return err
				}
			}
		}
		if len(active) == 0 {
			return nil
		}
		maps.Copy(going, active)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ended:
		case <-t.C:
		}
	}
}

// activeRuns are the ids of this conversation's queued and running runs (started here, or in a
// thread of this conversation).
func (s *chatSession) activeRuns(ctx context.Context) (map[string]bool, error) {
	runs, err := s.store.ListRuns(ctx, db.RunFilter{Statuses: []db.Status{db.StatusQueued, db.StatusRunning}, InConversation: s.at.ConversationID(),
		Limit: 100})
	if err != nil {
		return nil, err
	}
	ids := map[string]bool{}
	for _, r := range runs {
		ids[r.ID] = true
	}
	return ids, nil
}

// stopped looks at a run that stopped while the terminal waited. The bot has told this terminal
// how a run it executed ended, except a cancel from elsewhere (the dashboard, another terminal):
// then the terminal stops its part of the run at once and says who cancelled it.
func (s *chatSession) stopped(ctx context.Context, id string) error {
	run, err := s.store.GetRun(ctx, id)
	if err != nil || run.Status != db.StatusCancelled {
		return err
	}
	s.engine.Workers.Stop(id)
	events, err := s.store.Events(ctx, id)
	if err != nil {
		return err
	}
	if c, ok := reporting.LastCancellation(events); ok {
		fmt.Fprintln(s.out, console.Render(reporting.CancelledText(run, c)))
	}
	return nil
}

var errNoMessages = errors.New("no messages")

// attach makes a conversation's runs this terminal's. A store that refuses is told in the same
// sentence chat uses, with the details after it, since the terminal's user is often its operator.
// A disk below MIN_FREE_DISK is refused first: the terminal executes its own runs and claims none
// on such a disk, so it would only wait.
func attach(ctx context.Context, e *orchestrator.Engine, conversationID string) error {
	var low *execution.LowDiskError
	if errors.As(e.Workers.Disk.Check(), &low) {
		return fmt.Errorf("%v, so this terminal cannot run anything: free some space there, or lower MIN_FREE_DISK (0 turns the check off)", low)
	}
	if err := e.Presence.Attach(ctx, conversationID); err != nil {
		return fmt.Errorf("%s (%w)", dispatch.StoreErrorText("attach this terminal to its conversation", err), err)
	}
	return nil
}
