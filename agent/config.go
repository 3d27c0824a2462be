package agent

import (
	"slices"
	"strings"
	"time"

	"threadflow/platform"
)

// The operator's settings for every agent turn (cmd/bot parses them into Config).
const (
	PermissionsEnv = "AGENT_PERMISSIONS"  // default permission level (read, edit, full)
	AllowFullEnv   = "AGENT_ALLOW_FULL"   // true lets nodes use permissions: full
	TimeoutEnv     = "AGENT_TIMEOUT"      // the longest one turn may take
	IdleTimeoutEnv = "AGENT_IDLE_TIMEOUT" // the longest a turn may go without printing an event
)

// Defaults of the settings.
const (
	DefaultTimeout     = 30 * time.Minute
	DefaultIdleTimeout = 10 * time.Minute
)

// Config is the operator's policy for agent turns. The zero value means the defaults.
type Config struct {
	Permissions Permissions   // for requests that name none; "" means DefaultPermissions
	AllowFull   bool          // permissions: full is refused unless set
	Timeout     time.Duration // 0 means DefaultTimeout
	IdleTimeout time.Duration // 0 means DefaultIdleTimeout
}

func (c Config) permissions(p Permissions) Permissions {
	switch {
	case p != "":
		return p
	case c.Permissions != "":
		return c.Permissions
	}
	return DefaultPermissions
}

func (c Config) timeout() time.Duration {
	if c.Timeout > 0 {
		return c.Timeout
	}
	return DefaultTimeout
}

func (c Config) idleTimeout() time.Duration {
	if c.IdleTimeout > 0 {
		return c.IdleTimeout
	}
	return DefaultIdleTimeout
}

// hiddenEnv names the bot's own secrets and database settings, and every chat platform's
// credentials. They are removed from the agent CLI's environment even if the bot left them set: an
// agent runs model-chosen commands.
var hiddenEnv = append([]string{"DATABASE_URL", "TEST_DATABASE_URL", "DASHBOARD_TOKEN",
	"SESSION_SECRET", "OIDC_CLIENT_SECRET", "SLACK_CLIENT_SECRET", "DISCORD_CLIENT_SECRET"}, platform.SecretEnv()...)

// childEnv is the environment of an agent CLI: the bot's own without its secrets and without the
// PostgreSQL client variables (PG*), then extra.
func childEnv(base, extra []string) []string {
	env := make([]string, 0, len(base)+len(extra))
	for _, kv := range base {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, "PG") || slices.Contains(hiddenEnv, name) {
			continue
		}
		env = append(env, kv)
	}
	return append(env, extra...)
}
