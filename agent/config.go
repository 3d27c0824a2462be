package agent

import (
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The operator's settings for every agent turn, read by ConfigFromEnv.
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

// ConfigFromEnv reads the AGENT_* settings through env (nil: the process environment). Errors
// name the variable and say what it accepts.
func ConfigFromEnv(env func(string) string) (Config, error) {
	if env == nil {
		env = os.Getenv
	}
	var c Config
	var err error
	if c.Permissions, err = ParsePermissions(env(PermissionsEnv)); err != nil {
		return c, fmt.Errorf("%s: %w", PermissionsEnv, err)
	}
	if v := strings.TrimSpace(env(AllowFullEnv)); v != "" {
		if c.AllowFull, err = strconv.ParseBool(v); err != nil {
			return c, fmt.Errorf("%s must be true or false, found %q", AllowFullEnv, v)
		}
	}
	if c.Permissions == PermFull && !c.AllowFull {
		return c, fmt.Errorf("%s=full needs %s=true: full lets the agent run anything on this host without a sandbox", PermissionsEnv, AllowFullEnv)
	}
	if c.Timeout, err = parseTimeout(env, TimeoutEnv); err != nil {
		return c, err
	}
	if c.IdleTimeout, err = parseTimeout(env, IdleTimeoutEnv); err != nil {
		return c, err
	}
	return c, nil
}

func parseTimeout(env func(string) string, name string) (time.Duration, error) {
	v := strings.TrimSpace(env(name))
	if v == "" {
		return 0, nil
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < time.Second {
		return 0, fmt.Errorf("%s must be a duration of at least 1s, like 30m or 1h, found %q", name, v)
	}
	return d, nil
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

// hiddenEnv names the bot's own secrets and database settings. They are removed from the agent
// CLI's environment even if the bot left them set: an agent runs model-chosen commands.
var hiddenEnv = []string{"DATABASE_URL", "TEST_DATABASE_URL", "SLACK_BOT_TOKEN", "SLACK_APP_TOKEN",
	"DISCORD_BOT_TOKEN", "DASHBOARD_TOKEN"}

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
