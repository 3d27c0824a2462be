package main

import (
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"threadflow/adapters/console"
	"threadflow/agent"
	"threadflow/conversation"
	"threadflow/db"
	"threadflow/orchestrator"
	"threadflow/workflow"
)

// newEngine wires the orchestrator from the configuration. notifier is optional (the CLI prints
// progress with one); outboxes are the adapters that can report runs; obs (optional) receives the
// measurements behind /metrics.
func newEngine(cfg Config, log *zap.Logger, st db.Store, outboxes map[string]conversation.Outbox, notifier orchestrator.Notifier,
	obs orchestrator.Observer) *orchestrator.Engine {
	// A process with the terminal as its chat is a terminal: it executes the runs of the
	// conversations it attaches to. Any other process is a server, which also executes the runs of
	// terminals that are gone (docs/state-machine.md, "Who executes a run").
	_, terminal := outboxes[console.Platform]
	var unattended []string
	if !terminal {
		unattended = []string{console.Platform}
	}
	return orchestrator.New(orchestrator.Config{
		Terminal:        terminal,
		Unattended:      unattended,
		Store:           st,
		Catalogs:        newCatalogs(cfg, log),
		Providers:       providers{cfg: cfg, log: log},
		DefaultProvider: cfg.DefaultProvider,
		Outboxes:        outboxes,
		Auth:            orchestrator.NewAuth(cfg.AllowedUserIDs, cfg.AdminUserIDs),
		Dirs:            orchestrator.Dirs{Home: cfg.Home, RepoPath: cfg.RepoPath},
		Disk:            diskGuard(cfg),
		Log:             log,
		Limits:          cfg.limits(),
		Owner:           cfg.ReplicaID,
		LeaseTTL:        cfg.LeaseTTL,
		MaxRecoveries:   cfg.MaxRecoveries,
		Slots:           cfg.Workers,
		MaxParallel:     cfg.MaxParallelNodes,
		Grace:           cfg.ShutdownGrace,
		Notifier:        notifier,
		// Claim only runs this process can report on: a run started from `bot chat` stays with a
		// terminal, a Slack run with a bot connected to Slack.
		ClaimReportableOnly: true,
		Observer:            obs,
	})
}

// diskGuard watches MIN_FREE_DISK on THREADFLOW_HOME, for the workers and for /readyz.
func diskGuard(cfg Config) orchestrator.DiskGuard {
	return orchestrator.DiskGuard{Dir: cfg.Home, MinFree: cfg.MinFreeDisk}
}

// providers creates agent providers by name, "" meaning DEFAULT_PROVIDER.
type providers struct {
	cfg Config
	log *zap.Logger
}

func (p providers) Provider(name string) (orchestrator.Provider, error) {
	if name == "" {
		name = p.cfg.DefaultProvider
	}
	if name == "" {
		return nil, fmt.Errorf("no AI provider is configured: set DEFAULT_PROVIDER to claude or codex, or name a provider on the node")
	}
	switch name {
	case agent.NameClaude:
		return &agent.Claude{Bin: p.cfg.ClaudeBin, Log: p.log, Config: p.cfg.Agent}, nil
	case agent.NameCodex:
		return &agent.Codex{Bin: p.cfg.CodexBin, Log: p.log, Config: p.cfg.Agent}, nil
	}
	return agent.New(name, nil, p.log) // says which names exist
}

// catalogReload is how long a discovered catalog is reused. Discovery reads every workflow file;
// doing it per message would put file I/O on the dispatch path, and a new file shows up within this.
const catalogReload = 2 * time.Second

// catalogs re-discovers workflows at most every catalogReload and logs invalid files once per
// change of the problems found.
type catalogs struct {
	home string
	dirs []string
	log  *zap.Logger

	mu       sync.Mutex
	cat      *workflow.Catalog
	loadedAt time.Time
	lastErrs string
}

func newCatalogs(cfg Config, log *zap.Logger) *catalogs {
	return &catalogs{home: cfg.Home, dirs: cfg.WorkflowsDirs, log: log}
}

func (c *catalogs) Catalog() *workflow.Catalog {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cat != nil && time.Since(c.loadedAt) < catalogReload {
		return c.cat
	}
	cat, errs := workflow.Discover(c.home, c.dirs)
	if msg := errs.Error(); len(errs) > 0 && msg != c.lastErrs {
		c.log.Warn("workflow.discover_failed", zap.Int("files", len(errs)), zap.String("errors", msg))
		c.lastErrs = msg
	}
	c.cat, c.loadedAt = cat, time.Now()
	return cat
}
