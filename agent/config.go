package agent

import (
	"sync"
	"time"
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
	Prices      *Prices       // prices tokens a CLI reports without a cost; nil means DefaultPrices
}

// builtinPrices is DefaultPrices, parsed once.
var builtinPrices = sync.OnceValue(DefaultPrices)

func (c Config) prices() *Prices {
	if c.Prices != nil {
		return c.Prices
	}
	return builtinPrices()
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
