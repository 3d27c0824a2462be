package main

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	"threadflow/adapters/web/signin"
	"threadflow/platform"
)

// SignInConfig holds the dashboard's sign-in settings (issue 29). Sign-in is on when any provider
// is configured; then DASHBOARD_URL and SESSION_SECRET are required.
type SignInConfig struct {
	DashboardURL    string        // where providers send people back: https://threadflow.example.com
	SessionSecret   string        // secret: signs the session cookie
	SessionLifetime time.Duration // how long a sign-in lasts
	OIDCIssuer      string
	OIDCClientID    string
	OIDCSecret      string // secret
	OIDCIDClaim     string // the ID token claim holding the person's platform user id
	OIDCIDPlatform  string // the platform that id is on: slack or discord
	SlackClientID   string
	SlackSecret     string // secret
	DiscordClientID string
	DiscordSecret   string // secret
}

// Enabled reports whether any sign-in provider is configured.
func (s SignInConfig) Enabled() bool {
	return s.OIDCIssuer != "" || s.SlackClientID != "" || s.DiscordClientID != ""
}

// signInSettings are the sign-in variables, in the order help prints them.
var signInSettings = []setting{
	{env: "DASHBOARD_URL", usage: "the dashboard's public base URL (https://threadflow.example.com); sign-in providers send people back to DASHBOARD_URL/signin/<provider>/callback; required with sign-in",
		apply: intoString(func(c *Config) *string { return &c.SignIn.DashboardURL }, checkAPIURL)},
	{env: "SESSION_SECRET", secret: true, usage: "at least 32 random characters that sign the dashboard's session cookie (openssl rand -hex 32); required with sign-in",
		apply: intoString(func(c *Config) *string { return &c.SignIn.SessionSecret }, nil)},
	{env: "SESSION_LIFETIME", def: "12h", usage: "how long a dashboard sign-in lasts (at least 1m)",
		apply: intoDuration(func(c *Config) *time.Duration { return &c.SignIn.SessionLifetime }, time.Minute)},
	{env: "OIDC_ISSUER", usage: "issuer URL of an OpenID Connect provider to sign in to the dashboard with (found by discovery at start)",
		apply: intoString(func(c *Config) *string { return &c.SignIn.OIDCIssuer }, checkAPIURL)},
	{env: "OIDC_CLIENT_ID", usage: "client id registered with OIDC_ISSUER",
		apply: intoString(func(c *Config) *string { return &c.SignIn.OIDCClientID }, nil)},
	{env: "OIDC_CLIENT_SECRET", secret: true, usage: "client secret registered with OIDC_ISSUER",
		apply: intoString(func(c *Config) *string { return &c.SignIn.OIDCSecret }, nil)},
	{env: "OIDC_ID_CLAIM", def: "sub", usage: "ID token claim that holds the person's user id on OIDC_ID_PLATFORM",
		apply: intoString(func(c *Config) *string { return &c.SignIn.OIDCIDClaim }, nil)},
	{env: "OIDC_ID_PLATFORM", usage: "platform of the OIDC_ID_CLAIM id, slack or discord (slack makes the person slack:<claim>); required with OIDC_ISSUER",
		apply: intoString(func(c *Config) *string { return &c.SignIn.OIDCIDPlatform }, func(v string) error {
			return oneOf(v, "", platform.Slack, platform.Discord) // never web: a web: id is a typed name
		})},
	{env: "SLACK_CLIENT_ID", usage: "client id of the Slack app, for \"Sign in with Slack\" on the dashboard",
		apply: intoString(func(c *Config) *string { return &c.SignIn.SlackClientID }, nil)},
	{env: "SLACK_CLIENT_SECRET", secret: true, usage: "client secret of the Slack app, with SLACK_CLIENT_ID",
		apply: intoString(func(c *Config) *string { return &c.SignIn.SlackSecret }, nil)},
	{env: "DISCORD_CLIENT_ID", usage: "OAuth2 client id of the Discord application, for signing in with Discord on the dashboard",
		apply: intoString(func(c *Config) *string { return &c.SignIn.DiscordClientID }, nil)},
	{env: "DISCORD_CLIENT_SECRET", secret: true, usage: "OAuth2 client secret of the Discord application, with DISCORD_CLIENT_ID",
		apply: intoString(func(c *Config) *string { return &c.SignIn.DiscordSecret }, nil)},
}

// check validates the sign-in settings that only make sense together.
func (s SignInConfig) check() error {
	pairs := [][2]string{{"OIDC_CLIENT_ID", s.OIDCClientID}, {"OIDC_CLIENT_SECRET", s.OIDCSecret}, {"OIDC_ID_PLATFORM", s.OIDCIDPlatform}}
	if s.OIDCIssuer != "" {
		for _, p := range pairs {
			if p[1] == "" {
				return &usageError{p[0] + " is required with OIDC_ISSUER; copy it from the provider's client registration"}
			}
		}
	}
	if (s.SlackClientID == "") != (s.SlackSecret == "") {
		return &usageError{"SLACK_CLIENT_ID and SLACK_CLIENT_SECRET must be set together (the Slack app's Basic Information page shows both)"}
	}
	if (s.DiscordClientID == "") != (s.DiscordSecret == "") {
		return &usageError{"DISCORD_CLIENT_ID and DISCORD_CLIENT_SECRET must be set together (the Discord application's OAuth2 page shows both)"}
	}
	if !s.Enabled() {
		return nil
	}
	if s.DashboardURL == "" {
		return &usageError{"DASHBOARD_URL is required with sign-in: providers send people back to DASHBOARD_URL/signin/<provider>/callback; set it to the dashboard's public URL"}
	}
	if len(s.SessionSecret) < signin.MinSecret {
		return &usageError{fmt.Sprintf("SESSION_SECRET must be at least %d characters with sign-in (openssl rand -hex 32)", signin.MinSecret)}
	}
	return nil
}

// newSignIn builds the dashboard's sign-in from the settings, or nil when no provider is set. The
// generic OIDC provider is discovered here, so a wrong OIDC_ISSUER stops the start with its name.
func newSignIn(ctx context.Context, cfg Config) (*signin.Service, error) {
	s := cfg.SignIn
	if !s.Enabled() {
		return nil, nil
	}
	var providers []*signin.Provider
	if s.SlackClientID != "" {
		providers = append(providers, signin.Slack(ctx, slackOrigin(cfg.Slack.APIURL), s.SlackClientID, s.SlackSecret))
	}
	if s.DiscordClientID != "" {
		origin := cfg.Discord.APIURL // the adapter's requests go to its host, as the sign-in's do
		if origin == "" {
			origin = "https://discord.com"
		}
		providers = append(providers, signin.Discord(origin, s.DiscordClientID, s.DiscordSecret))
	}
	if s.OIDCIssuer != "" {
		dctx, cancel := context.WithTimeout(ctx, 15*time.Second)
		defer cancel()
		p, err := signin.OIDC(dctx, s.OIDCIssuer, s.OIDCClientID, s.OIDCSecret, s.OIDCIDClaim, s.OIDCIDPlatform)
		if err != nil {
			return nil, &usageError{err.Error()}
		}
		providers = append(providers, p)
	}
	return signin.New(signin.Config{BaseURL: s.DashboardURL, Secret: []byte(s.SessionSecret), Lifetime: s.SessionLifetime,
		Providers: providers, Client: &http.Client{Timeout: 30 * time.Second}})
}

// slackOrigin is where Slack's sign-in lives: https://slack.com, or the origin of SLACK_API_URL (a
// fake's, in tests).
func slackOrigin(apiURL string) string {
	if apiURL == "" {
		return "https://slack.com"
	}
	return strings.TrimSuffix(strings.TrimSuffix(apiURL, "/"), "/api")
}
