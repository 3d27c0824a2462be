// Package childenv builds the environment of every process the bot starts for a run: shell and
// script nodes, agent CLIs and the git commands of workspaces. One rule for all of them: the bot's
// own environment without its secrets, then what the caller adds.
//
// A child runs code the bot does not control (a workflow author's script, a model's tool calls), so
// it must never see the credentials the bot itself works with: chat tokens, the database URL and
// the PostgreSQL client variables, the dashboard's and sign-in secrets. Workflows that need a
// credential of their own get it from the environment the operator gives the bot under a name the
// bot does not use (a deploy token, ANTHROPIC_API_KEY for the agent CLIs).
package childenv

import (
	"os"
	"slices"
	"strings"

	"threadflow/platform"
)

// hidden names the bot's own secrets and database settings, and every chat platform's credentials.
// cmd/bot's test checks that each setting it marks secret is here.
var hidden = append([]string{
	"DATABASE_URL", "TEST_DATABASE_URL", "DASHBOARD_TOKEN", "WORKSPACE_REMOTE",
	"SESSION_SECRET", "OIDC_CLIENT_SECRET", "SLACK_CLIENT_SECRET", "DISCORD_CLIENT_SECRET",
}, platform.SecretEnv()...)

// Hidden reports whether the variable name is kept from children: one of the bot's secrets, or a
// PostgreSQL client setting (PGPASSWORD, PGHOST, ...), which would point a child's psql at the
// bot's own database.
func Hidden(name string) bool {
	return strings.HasPrefix(name, "PG") || slices.Contains(hidden, name)
}

// From is base ("NAME=value" entries, as os.Environ returns) without the hidden variables, then
// extra. Entries of extra come last so that they win over the bot's own of the same name.
func From(base []string, extra ...string) []string {
	env := make([]string, 0, len(base)+len(extra))
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		if !Hidden(name) {
			env = append(env, kv)
		}
	}
	return append(env, extra...)
}

// Environ is From the bot's current environment.
func Environ(extra ...string) []string { return From(os.Environ(), extra...) }
