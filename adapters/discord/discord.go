// Package discord is the Discord adapter: gateway inbound, REST outbound, application commands,
// buttons, safe mentions. It turns gateway events (slash commands, mentions, thread replies, DMs,
// button clicks) into conversation.Messages, claiming each event first so that only one of several
// replicas acts on it, and renders conversation.Replies as Discord messages that can never ping.
package discord

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"time"

	"github.com/bwmarrin/discordgo"
	"go.uber.org/zap"

	"threadflow/conversation"
	"threadflow/platform"
)

// Platform is the platform name in Addresses and user ids.
const Platform = platform.Discord

// ErrConfig is wrapped by every configuration error New returns.
var ErrConfig = errors.New("discord: invalid configuration")

// Config configures an Adapter.
type Config struct {
	BotToken string   // the bot token from the developer portal, without the "Bot " prefix
	AppID    string   // the application id, needed to register the /workflow command
	GuildIDs []string // register the command per guild (instant); empty means globally
	APIURL   string   // "" = Discord's own; a loopback fake in tests
	Log      *zap.Logger
	// Forms, when set, answers a run command that lacks its workflow's required inputs with a modal
	// and starts the run its submission asks for.
	Forms conversation.Forms
}

// Autocompleter is implemented by the orchestrator; the adapter calls it for autocomplete
// interactions.
type Autocompleter interface {
	WorkflowNames(ctx context.Context, prefix string) []string
	RunIDs(ctx context.Context, conv conversation.Address, prefix string) []string
}

// Claimer records that an event is being handled. Every replica receives every gateway event;
// only the one whose claim comes first acts on it.
type Claimer interface {
	// Claim records an event the adapter answers itself (an autocomplete, an expired button).
	Claim(ctx context.Context, platform, eventID string) (first bool, err error)
	// ClaimMessage records m's event with m, which the claimant then hands to its handler: m is kept
	// until it is handled, so a replica that dies first leaves it to another (conversation.Inbox).
	ClaimMessage(ctx context.Context, m conversation.Message) (first bool, err error)
}

// intents are the gateway events the adapter needs: guild channels and threads, messages in them
// with their content (a privileged intent enabled in the developer portal), and DMs.
const intents = discordgo.IntentsGuilds | discordgo.IntentsGuildMessages |
	discordgo.IntentMessageContent | discordgo.IntentsDirectMessages

// Adapter connects one bot identity to Discord.
type Adapter struct {
	cfg      Config
	log      *zap.Logger
	session  *discordgo.Session
	handler  conversation.Handler
	ac       Autocompleter
	claimer  Claimer
	botID    string // set by Connect, before Run registers any event handler
	channels *channelCache
	tokens   *interactionTokens
	buttons  *buttonKeys
	retry    retryPolicy
	inflight tracker
	now      func() time.Time
	forms    conversation.Forms // Config.Forms; nil: no modals
}

// New checks cfg and prepares a session; nothing is sent until Run or the Outbox is used.
func New(cfg Config, h conversation.Handler, ac Autocompleter, cl Claimer) (*Adapter, error) {
	if err := validate(cfg); err != nil {
		return nil, err
	}
	if h == nil || ac == nil || cl == nil {
		return nil, fmt.Errorf("%w: handler, autocompleter and claimer are required", ErrConfig)
	}
	s, err := discordgo.New("Bot " + cfg.BotToken)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	s.Identify.Intents = intents
	s.StateEnabled = false // the adapter keeps only what it needs (channel parents)
	client, err := apiClient(cfg.APIURL)
	if err != nil {
		return nil, err
	}
	s.Client = client
	log := cfg.Log
	if log == nil {
		log = zap.NewNop()
	}
	return &Adapter{
		cfg: cfg, log: log.Named("discord"), session: s, handler: h, ac: ac, claimer: cl, forms: cfg.Forms,
		channels: newChannelCache(), tokens: newInteractionTokens(), buttons: newButtonKeys(),
		retry: defaultRetry, now: time.Now,
	}, nil
}

func validate(cfg Config) error {
	if cfg.BotToken == "" {
		return fmt.Errorf("%w: DISCORD_BOT_TOKEN is empty; copy the token from the Bot page of your application", ErrConfig)
	}
	if !isSnowflake(cfg.AppID) {
		return fmt.Errorf("%w: DISCORD_APP_ID %q is not a Discord id (digits only); copy the Application ID from the General Information page", ErrConfig, cfg.AppID)
	}
	for _, g := range cfg.GuildIDs {
		if !isSnowflake(g) {
			return fmt.Errorf("%w: DISCORD_GUILD_IDS entry %q is not a Discord id (digits only)", ErrConfig, g)
		}
	}
	return nil
}

func isSnowflake(s string) bool {
	if s == "" || len(s) > 20 {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// apiClient returns the HTTP client for discordgo's REST calls, aimed at apiURL when one is set.
func apiClient(apiURL string) (*http.Client, error) {
	c := &http.Client{Timeout: 20 * time.Second}
	if apiURL == "" {
		return c, nil
	}
	u, err := url.Parse(apiURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("%w: DISCORD_API_URL %q must be an http(s) URL such as http://127.0.0.1:8080", ErrConfig, apiURL)
	}
	c.Transport = apiTransport{base: u, next: http.DefaultTransport}
	return c, nil
}

// Connect checks the bot token by fetching the bot's own user and says who the bot is
// ("@threadflow"). A server calls it before it announces Discord, so that "Discord on" means
// Discord answered and took the token; Run calls it when nobody did. It must not be called while
// Run runs.
func (a *Adapter) Connect(ctx context.Context) (string, error) {
	me, err := a.session.User("@me", discordgo.WithContext(ctx))
	if err != nil {
		var refused *discordgo.RESTError
		if errors.As(err, &refused) && refused.Response != nil && refused.Response.StatusCode == http.StatusUnauthorized {
			return "", fmt.Errorf("discord: Discord refused DISCORD_BOT_TOKEN (%w); copy the token from the Bot page of your application", err)
		}
		return "", fmt.Errorf("discord: cannot reach Discord to check DISCORD_BOT_TOKEN: %w; check the network, and DISCORD_API_URL if set", err)
	}
	a.botID = me.ID
	return "@" + me.Username, nil
}

// Run connects to the gateway (checking the token first unless Connect did), registers the
// /workflow command and handles events until ctx ends. It returns nil when ctx ends and an error
// when it cannot connect or register.
func (a *Adapter) Run(ctx context.Context) error {
	if a.botID == "" {
		if _, err := a.Connect(ctx); err != nil {
			return err
		}
	}
	defer a.addHandlers(ctx)()
	if err := a.session.Open(); err != nil {
		return fmt.Errorf("discord: open the gateway: %w", err)
	}
	defer a.shutdown()
	if err := a.registerCommands(ctx); err != nil {
		if ctx.Err() != nil {
			return nil // stopped while registering: a shutdown, not a failure
		}
		return err
	}
	a.log.Info("discord.gateway_connected", zap.Int("guilds", len(a.cfg.GuildIDs)))
	<-ctx.Done()
	return nil
}

// shutdown closes the gateway, then waits for the handlers already running (their ctx is done).
func (a *Adapter) shutdown() {
	if err := a.session.Close(); err != nil {
		a.log.Warn("discord.gateway_close_failed", errField(err))
	}
	a.inflight.closeAndWait()
}

// addHandlers routes gateway events to the adapter with Run's ctx and returns their removal.
func (a *Adapter) addHandlers(ctx context.Context) func() {
	rmMsg := a.session.AddHandler(func(_ *discordgo.Session, e *discordgo.MessageCreate) {
		a.inflight.do(func() { a.onMessage(ctx, e.Message) })
	})
	rmIn := a.session.AddHandler(func(_ *discordgo.Session, e *discordgo.InteractionCreate) {
		a.inflight.do(func() { a.onInteraction(ctx, e.Interaction) })
	})
	rmRaw := a.session.AddHandler(func(_ *discordgo.Session, e *discordgo.Event) {
		a.inflight.do(func() { a.onRawEvent(ctx, e) })
	})
	return func() { rmMsg(); rmIn(); rmRaw() }
}

// claim reports whether this replica is the first to claim the event and so must answer it.
func (a *Adapter) claim(ctx context.Context, eventID string) bool {
	first, err := a.claimer.Claim(ctx, Platform, eventID)
	return a.claimed(eventID, first, err)
}

// claimMessage reports whether this replica is the first to claim m's event and so must hand m on.
func (a *Adapter) claimMessage(ctx context.Context, m conversation.Message) bool {
	first, err := a.claimer.ClaimMessage(ctx, m)
	return a.claimed(m.EventID, first, err)
}

func (a *Adapter) claimed(eventID string, first bool, err error) bool {
	if err != nil {
		// Acting without a claim could answer twice; staying silent is the smaller harm.
		a.log.Error("discord.claim_failed", zap.String("event", eventID), errField(err))
		return false
	}
	if !first {
		// Expected with several replicas; logged so an operator (or a test) can see who stood down.
		a.log.Debug("discord.event_claimed_elsewhere", zap.String("event", eventID))
	}
	return first
}
