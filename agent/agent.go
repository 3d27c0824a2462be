package agent

import (
	"context"
	"errors"
	"fmt"

	"go.uber.org/zap"
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
}

// Result is what a successful turn produced.
type Result struct {
	Text      string // the final assistant text
	SessionID string // the session to continue next time
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
