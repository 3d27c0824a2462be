// Package slack is the Slack adapter: Socket Mode inbound, Web API outbound, mrkdwn rendering and
// Block Kit buttons. It turns slash commands, mentions, thread replies, direct messages and button
// clicks into conversation.Messages for a conversation.Handler, and implements conversation.Outbox
// with chat.postMessage, chat.update and chat.postEphemeral, paced per channel and retried on
// rate limits and transient failures.
package slack

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"strings"

	slackapi "github.com/slack-go/slack"
	"github.com/slack-go/slack/socketmode"
	"go.uber.org/zap"

	"threadflow/conversation"
	"threadflow/platform"
)

// Platform is the platform name in conversation Addresses and database keys.
const Platform = platform.Slack

// ErrConfig reports a configuration the adapter cannot start with.
var ErrConfig = errors.New("slack: invalid configuration")

// Config holds what the adapter needs to reach Slack.
type Config struct {
	BotToken string      // xoxb-: Web API calls (OAuth & Permissions > Bot User OAuth Token)
	AppToken string      // xapp-: Socket Mode (Basic Information > App-Level Tokens, connections:write)
	APIURL   string      // Web API base URL; "" means Slack's own. Tests point it at slackfake.
	Log      *zap.Logger // nil logs nothing
	// Forms, when set, opens a modal for a run command that lacks its workflow's required inputs
	// and starts the run its submission asks for.
	Forms conversation.Forms
}

// Adapter connects one Slack app to a conversation.Handler.
type Adapter struct {
	api  *slackapi.Client
	h    conversation.Handler
	log  *zap.Logger
	out  *outbox
	auth *slackapi.AuthTestResponse // set by Connect
	// forms shows and checks run forms (Config.Forms); nil: none
	forms conversation.Forms

	groups groupCache // user group members (GroupMembers)
}

// New checks cfg and builds an adapter; it does no I/O (Run does).
func New(cfg Config, h conversation.Handler) (*Adapter, error) {
	if !strings.HasPrefix(cfg.BotToken, "xoxb-") {
		return nil, fmt.Errorf("%w: the bot token must start with xoxb- (copy the Bot User OAuth Token "+
			"from OAuth & Permissions into SLACK_BOT_TOKEN)", ErrConfig)
	}
	if !strings.HasPrefix(cfg.AppToken, "xapp-") {
		return nil, fmt.Errorf("%w: the app token must start with xapp- (create an App-Level Token with the "+
			"connections:write scope under Basic Information and put it in SLACK_APP_TOKEN)", ErrConfig)
	}
	if h == nil {
		return nil, fmt.Errorf("%w: no message handler", ErrConfig)
	}
	lg := cfg.Log
	if lg == nil {
		lg = zap.NewNop()
	}
	opts := []slackapi.Option{
		slackapi.OptionAppLevelToken(cfg.AppToken),
		slackapi.OptionLog(log.New(io.Discard, "", 0)), // errors reach zap through our own wrapping
	}
	if cfg.APIURL != "" {
		opts = append(opts, slackapi.OptionAPIURL(strings.TrimSuffix(cfg.APIURL, "/")+"/"))
	}
	api := slackapi.New(cfg.BotToken, opts...)
	a := &Adapter{api: api, h: h, log: lg, out: newOutbox(api, lg), forms: cfg.Forms}
	a.out.members = a.GroupMembers
	return a, nil
}

// Outbox returns the adapter's conversation.Outbox. It may be used before and while Run runs.
func (a *Adapter) Outbox() conversation.Outbox { return a.out }

// Connect checks the bot token with auth.test and says who the bot is ("@threadflow in Acme"). A
// server calls it before it announces Slack, so that "Slack on" means Slack answered and took the
// token; Run calls it when nobody did. It must not be called while Run runs.
func (a *Adapter) Connect(ctx context.Context) (string, error) {
	auth, err := a.api.AuthTestContext(ctx)
	if err != nil {
		return "", authError(err)
	}
	a.auth = auth
	a.log.Info("slack.auth_checked", zap.String("team_id", auth.TeamID), zap.String("bot_user_id", auth.UserID))
	return fmt.Sprintf("@%s in %s", auth.User, auth.Team), nil
}

// authError says whether Slack refused the token or could not be asked at all.
func authError(err error) error {
	var refused slackapi.SlackErrorResponse
	if errors.As(err, &refused) {
		return fmt.Errorf("slack: Slack refused SLACK_BOT_TOKEN (auth.test: %w); copy the Bot User OAuth Token from "+
			"OAuth & Permissions into SLACK_BOT_TOKEN", err)
	}
	return fmt.Errorf("slack: cannot reach Slack to check SLACK_BOT_TOKEN (auth.test): %w; check the network, and SLACK_API_URL if set", err)
}

// Run checks the bot token with auth.test (unless Connect did), connects Socket Mode and hands
// every inbound event to the handler, in arrival order, each acked once the handler took it. It reconnects whenever
// the connection drops and returns nil when ctx ends, or an error when Slack rejects the tokens.
func (a *Adapter) Run(ctx context.Context) error {
	if a.auth == nil {
		if _, err := a.Connect(ctx); err != nil {
			return err
		}
	}
	in := newInbound(a.auth.UserID)
	sm := socketmode.New(a.api, socketmode.OptionLog(log.New(io.Discard, "", 0)))

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- a.stayConnected(ctx, sm) }()
	for {
		select {
		case err := <-done:
			return err
		case ev := <-sm.Events:
			a.dispatch(ctx, sm, in, ev)
		}
	}
}

// form answers an envelope that opens or submits a run form; it reports whether it did (and acked).
// Neither writes anything the form does not: opening one is a views.open, and a submission's run
// is created before its ack (within Slack's 3 seconds: a run's creation is one commit).
func (a *Adapter) form(ctx context.Context, sm *socketmode.Client, in inbound, ev socketmode.Event) bool {
	var payload any
	switch data := ev.Data.(type) {
	case slackapi.SlashCommand:
		m, _ := in.translate(ev)
		if !a.openForm(ctx, data, m) {
			return false
		}
	case slackapi.InteractionCallback:
		if data.Type != slackapi.InteractionTypeViewSubmission || data.View.CallbackID != formCallback {
			return false
		}
		payload = a.submitForm(ctx, data)
	default:
		return false
	}
	if err := sm.AckCtx(ctx, ev.Request.EnvelopeID, payload); err != nil {
		a.log.Warn("slack.ack_failed", zap.String("envelope_id", ev.Request.EnvelopeID), zap.Error(err))
	}
	return true
}

// dispatch translates an envelope, hands it over, then acks it. The handler (the bot's Inbox)
// records the event and queues it, which takes milliseconds, well within the 3 seconds Slack waits
// for an ack: so an event is acked only once it is recorded, and a bot killed before that gets
// it again from Slack instead of losing it (issue 27). Handling itself happens after the ack.
func (a *Adapter) dispatch(ctx context.Context, sm *socketmode.Client, in inbound, ev socketmode.Event) {
	switch ev.Type {
	case socketmode.EventTypeConnected:
		a.log.Info("slack.connection_opened")
	case socketmode.EventTypeConnectionError:
		a.log.Warn("slack.connection_failed", zap.Any("detail", ev.Data))
	case socketmode.EventTypeSlashCommand, socketmode.EventTypeEventsAPI, socketmode.EventTypeInteractive:
		if ev.Request == nil {
			return
		}
		if a.form(ctx, sm, in, ev) {
			return
		}
		if m, ok := in.translate(ev); ok {
			if acc, ok := a.h.(conversation.Accepter); ok {
				if err := acc.Accept(ctx, m); err != nil {
					a.log.Warn("slack.event_unacknowledged", zap.String("envelope_id", ev.Request.EnvelopeID), zap.Error(err))
					return // not recorded: Slack sends it again
				}
			} else {
				a.h.Handle(ctx, m)
			}
		}
		if err := sm.AckCtx(ctx, ev.Request.EnvelopeID, nil); err != nil {
			a.log.Warn("slack.ack_failed", zap.String("envelope_id", ev.Request.EnvelopeID), zap.Error(err))
		}
	}
}
