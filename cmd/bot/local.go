package main

import (
	"context"
	"io"

	"go.uber.org/zap"

	"threadflow/adapters/console"
	"threadflow/conversation"
	"threadflow/db"
	"threadflow/orchestrator"
)

// openLocal is the start of every command that works on the bot's database from this process
// (migrate, chat, workflow): configuration, logger, THREADFLOW_HOME and the migrated store.
func openLocal(ctx context.Context, inv invocation, cmd string, args []string) (Config, *zap.Logger, db.Store, error) {
	cfg, log, err := setup(inv, cmd, args)
	if err != nil {
		return Config{}, nil, nil, err
	}
	if err := prepareHome(&cfg); err != nil {
		return Config{}, nil, nil, err
	}
	st, err := openStore(ctx, cfg, log)
	if err != nil {
		return Config{}, nil, nil, err
	}
	return cfg, log, st, nil
}

// terminalEngine is the orchestrator with the terminal as its only chat: what the bot says about
// runs started here is printed on w, and workflow files it leaves out are named on errw.
func terminalEngine(cfg Config, log *zap.Logger, st db.Store, w, errw io.Writer) *orchestrator.Engine {
	out := console.NewOutbox(w)
	eng := newEngine(cfg, log, st, map[string]conversation.Outbox{console.Platform: out}, nil, nil)
	if c, ok := eng.Dispatcher.Catalogs.(*catalogs); ok {
		c.announce(errw, true)
	}
	return eng
}
