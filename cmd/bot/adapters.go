package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"go.uber.org/zap"

	"threadflow/adapters/discord"
	"threadflow/adapters/slack"
	"threadflow/conversation"
	"threadflow/orchestrator"
	"threadflow/orchestrator/dispatch"
)

// inboxWorkers bounds how many conversations are handled at once per platform. Handlers mostly
// wait on the database and the platform, and the more of them wait together, the larger the groups
// their writes commit in: a burst of 500 conversations is answered in half the time with 256 as with
// 64 (BENCHMARKS.md, session 7; at 50 conversations p50 fell from 6 ms to 2.5 ms going to 64). What
// is heavy is bounded on its own: free-text answers (maxAssistantTurns), runs (WORKERS).
const inboxWorkers = 256

// chatAdapters builds the chat adapters the configuration turns on, registers their outboxes,
// checks each one's credentials with its platform (connectChats), and returns them as components
// with who the bot is on each platform. Each platform feeds the bot through its own Inbox, so
// messages of a conversation are handled in order and redelivered events act once.
func chatAdapters(ctx context.Context, cfg Config, log *zap.Logger, keeper *conversation.BatchKeeper, eng *orchestrator.Engine, outboxes map[string]conversation.Outbox,
	dups duplicateCounter, record func(conversation.Outbox) conversation.Outbox) (comps []component, on map[string]string, err error) {
	var inboxes []*conversation.Inbox
	claim := conversation.WithClaim(conversation.ClaimFor(cfg.LeaseTTL))
	defer func() {
		if err == nil {
			return
		}
		for _, in := range inboxes { // no component will run to close it: stop its workers here
			err = errors.Join(err, in.Close(ctx))
		}
	}()
	if cfg.Slack.Enabled() {
		in := conversation.NewInbox(eng.Dispatcher, keeper, inboxWorkers, log.With(zap.String("platform", slack.Platform)), claim)
		inboxes = append(inboxes, in)
		a, err := slack.New(slack.Config{BotToken: cfg.Slack.BotToken, AppToken: cfg.Slack.AppToken, APIURL: cfg.Slack.APIURL,
			Log: log.Named("slack"), Forms: eng.Dispatcher}, inboxHandler{in: in, log: log, dups: dups})
		if err != nil {
			return nil, nil, err
		}
		outboxes[slack.Platform] = record(a.Outbox())
		// Slack user groups in `access.run` and `approvers` are read through the adapter's client.
		eng.Dispatcher.Groups = map[string]dispatch.GroupMembers{slack.Platform: a}
		comps = append(comps, adapterComponent(slack.Platform, a.Connect, a.Run, in))
	}
	if cfg.Discord.Enabled() {
		// The Discord adapter claims every event in the database before acting (all replicas receive
		// every gateway event), with the message it becomes, through its inbox: the inbox then queues
		// that message without recording it again, and keeps it until it is handled.
		in := conversation.NewInbox(eng.Dispatcher, keeper, inboxWorkers, log.With(zap.String("platform", discord.Platform)), claim)
		inboxes = append(inboxes, in)
		a, err := discord.New(discord.Config{BotToken: cfg.Discord.BotToken, AppID: cfg.Discord.AppID, GuildIDs: cfg.Discord.GuildIDs,
			APIURL: cfg.Discord.APIURL, Log: log.Named("discord"), Forms: eng.Dispatcher}, inboxHandler{in: in, log: log, dups: dups}, eng.Dispatcher, claimer{keeper, in})
		if err != nil {
			return nil, nil, err
		}
		outboxes[discord.Platform] = record(a.Outbox())
		comps = append(comps, adapterComponent(discord.Platform, a.Connect, a.Run, in))
	}
	on, err = connectChats(ctx, comps)
	if err != nil {
		return nil, nil, err
	}
	return comps, on, nil
}

// adapterComponent runs an adapter with its inbox keeping the platform's requests (taking over
// those a dead process left, conversation.Inbox.Keep) and, when it stops, lets its inbox finish
// what was accepted.
func adapterComponent(name string, connect func(context.Context) (string, error), run func(context.Context) error, in *conversation.Inbox) component {
	return component{name: name, connect: connect, run: func(ctx context.Context) error {
		kctx, stop := context.WithCancel(ctx)
		kept := make(chan struct{})
		go func() {
			defer close(kept)
			in.Keep(kctx, name)
		}()
		err := run(ctx)
		stop()
		<-kept
		closeErr := in.Close(context.WithoutCancel(ctx))
		if err != nil {
			return err
		}
		return closeErr
	}}
}

// chatConnectTimeout bounds checking one chat platform's credentials at start-up, so a platform
// that does not answer fails the start with its error instead of hanging it.
const chatConnectTimeout = 30 * time.Second

// connectChats checks every chat adapter's credentials with its platform before the bot announces
// it, and returns who the bot is on each, by component name. The first failure stops start-up: an
// adapter that cannot connect would stop the bot a moment later anyway.
func connectChats(ctx context.Context, chats []component) (map[string]string, error) {
	on := map[string]string{}
	for _, c := range chats {
		if c.connect == nil {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, chatConnectTimeout)
		who, err := c.connect(cctx)
		cancel()
		if err != nil {
			return nil, c.named(err)
		}
		on[c.name] = who
	}
	return on, nil
}

// adapterStatus says which adapters are on and why the others are off, for the start-up banner.
// base is the dashboard's URL; the web chat page is always on (issue 8). on says who the bot is on
// each chat platform it connected to at start-up (connectChats): those configured, since start-up
// fails when one of them does not answer.
func adapterStatus(w io.Writer, cfg Config, base string, on map[string]string) {
	if who, ok := on[slack.Platform]; ok {
		fmt.Fprintf(w, "Slack on: %s.\n", who)
	} else {
		fmt.Fprintln(w, "Slack off: SLACK_BOT_TOKEN and SLACK_APP_TOKEN not set (see docs/slack.md).")
	}
	if who, ok := on[discord.Platform]; ok {
		fmt.Fprintf(w, "Discord on: %s.\n", who)
	} else {
		fmt.Fprintln(w, "Discord off: DISCORD_BOT_TOKEN not set (see docs/discord.md).")
	}
	webChat := "Web chat on: " + base + "chat (type /workflow run hello world)"
	switch {
	case cfg.SignIn.Enabled():
		webChat += "; people sign in at " + strings.TrimSuffix(cfg.SignIn.DashboardURL, "/") + "/signin/ and act as their Slack or Discord id"
	case cfg.DashboardToken != "":
		webChat += "; open " + base + "?token=<DASHBOARD_TOKEN> once to sign the browser in"
	}
	fmt.Fprintln(w, webChat+".")
	fmt.Fprintln(w, "Terminal: `go run ./cmd/bot chat \"/workflow run hello world\"` talks to the bot on the same database.")
}

// inboxHandler hands adapter messages to an Inbox.
type inboxHandler struct {
	in   *conversation.Inbox
	log  *zap.Logger
	dups duplicateCounter // optional (issue 8: /metrics)
}

// duplicateCounter counts inbound events an Inbox dropped as already handled; *metrics.Metrics
// implements it.
type duplicateCounter interface {
	DuplicateDropped(platform string)
}

func (h inboxHandler) Handle(ctx context.Context, m conversation.Message) {
	if err := h.Accept(ctx, m); err != nil {
		return // Accept logged it; a platform that does not wait for Accept cannot be told
	}
}

// Accept is Handle that returns the Inbox's error: the message was not recorded (conversation.Accepter).
func (h inboxHandler) Accept(ctx context.Context, m conversation.Message) error {
	accepted, err := h.in.Submit(ctx, m)
	switch {
	case err != nil:
		h.log.Warn("conversation.submit_failed", zap.String("platform", m.Platform), zap.Error(err))
		return err
	case !accepted && h.dups != nil: // issue 8: a redelivered event, counted on /metrics
		h.dups.DuplicateDropped(m.Platform)
	}
	return nil
}

// claimer lets the Discord adapter claim gateway events through the store's inbound table: events
// it answers itself by id alone, messages through the inbox that keeps them.
type claimer struct {
	k  *conversation.BatchKeeper
	in *conversation.Inbox
}

func (c claimer) Claim(ctx context.Context, platform, eventID string) (bool, error) {
	return c.k.MarkInbound(ctx, platform, eventID)
}

func (c claimer) ClaimMessage(ctx context.Context, m conversation.Message) (bool, error) {
	return c.in.Claim(ctx, m)
}

// transcriptFailures counts messages posted but not recorded in their transcript; *metrics.Metrics
// implements it.
type transcriptFailures interface {
	TranscriptWriteFailed(platform string)
}

// recorder returns the wrapper that records every message an outbox posts in the store's
// transcripts. A failed record is logged and counted, and the post stands (conversation.Recorded).
func recorder(st conversation.TranscriptWriter, log *zap.Logger, failures transcriptFailures) func(conversation.Outbox) conversation.Outbox {
	failed := func(platform string, err error) {
		log.Warn("conversation.transcript_write_failed", zap.String("platform", platform), zap.Error(err))
		failures.TranscriptWriteFailed(platform)
	}
	return func(ob conversation.Outbox) conversation.Outbox { return conversation.Recorded(ob, st, failed) }
}
