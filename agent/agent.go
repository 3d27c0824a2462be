package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"threadflow/db"
)

// Request is one agent turn.
type Request struct {
	Prompt    string
	Model     string   // empty = CLI default
	SessionID string   // continue this provider session; empty = fresh session
	Dir       string   // working directory of the CLI process
	Env       []string // extra KEY=VALUE for the process
	// Permissions is what the turn may do; "" means the provider's default (AGENT_PERMISSIONS).
	Permissions Permissions
	// MaxBudgetNanos caps what the turn may spend, in nanodollars, where the CLI has a cap of its
	// own (Claude Code's --max-budget-usd); 0 means none. Budgets are also enforced between turns.
	MaxBudgetNanos int64
	// IdleTimeout, when set, replaces AGENT_IDLE_TIMEOUT for this turn.
	IdleTimeout time.Duration
	// Effort is the reasoning effort (minimal, low, medium, high, xhigh, max); "" is the CLI's own.
	// Each CLI gets the nearest level it has.
	Effort string
	// Tools, when ToolsSet, are the only built-in tools Claude has; DeniedTools are taken away.
	// Both narrow what Permissions allows and never widen it. Codex has no such control.
	Tools       []string
	ToolsSet    bool
	DeniedTools []string
	// Settings is Claude Code settings JSON (static hooks), or "".
	Settings string
	// OutputSchema, when set, is a JSON Schema the answer must take the shape of: the CLI's own
	// structured-output mode is asked for it (claude --json-schema, codex --output-schema), and a
	// turn that ends without a structured answer fails. Validating the answer is the caller's.
	OutputSchema json.RawMessage
}

// idle is the idle watchdog of a turn.
func (r Request) idle(c Config) time.Duration {
	if r.IdleTimeout > 0 {
		return r.IdleTimeout
	}
	return c.idleTimeout()
}

// Result is what a successful turn produced.
type Result struct {
	Text      string // the final assistant text
	SessionID string // the session to continue next time
	// Usage is what the turn used, as the CLI reported it (Unknown when it reported nothing).
	Usage db.AgentUsageData
	// Structured is the structured answer as compact JSON, when the request had an OutputSchema.
	Structured json.RawMessage
}

// Provider runs agent turns. The orchestrator declares the same interface on its side.
type Provider interface {
	Name() string
	Run(ctx context.Context, r Request) (Result, error)
}

// ErrUnknownProvider is returned by New for a name it does not know.
var ErrUnknownProvider = errors.New("unknown agent provider")

// Provider names accepted by New.
const (
	NameClaude = "claude"
	NameCodex  = "codex"
)

// New returns the provider called name with the default Config. env looks up configuration
// (CLAUDE_BIN, CODEX_BIN); nil means no overrides. log may be nil.
func New(name string, env func(string) string, log *zap.Logger) (Provider, error) {
	if env == nil {
		env = func(string) string { return "" }
	}
	switch name {
	case NameClaude:
		return &Claude{Bin: env(claudeBinEnv), Log: log}, nil
	case NameCodex:
		return &Codex{Bin: env(codexBinEnv), Log: log}, nil
	}
	return nil, fmt.Errorf("%w %q: use one of %s, %s", ErrUnknownProvider, name, NameClaude, NameCodex)
}
