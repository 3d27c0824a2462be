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

// localConnections bounds a local command's PostgreSQL pool. The command drives one conversation's
// runs, and its loops (worker, rescuer, timers, presence) each start with a query: with the
// server's pool every one of them opened a connection of its own at start-up, a backend process the
// server forks for each (31 ms apiece on the VM of BENCHMARKS.md, "The command path, session 5").
// Two let a lease renewal pass a long query; no code holds one connection while it waits for
// another (the db, orchestrator, conversation and cmd/bot tests pass with a pool of one).
const localConnections = 2

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
	if err := announceHome(inv.stderr, cfg); err != nil {
		return Config{}, nil, nil, err
	}
	st, err := openStore(ctx, cfg, db.Options{Connections: localConnections}, log)
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
		c.announce(errw, newProblemsShown(cfg.Home))
	}
	return eng
}
