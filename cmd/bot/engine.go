package main

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"go.uber.org/zap"

	"threadflow/adapters/console"
	"threadflow/agent"
	"threadflow/conversation"
	"threadflow/db"
	"threadflow/orchestrator"
	"threadflow/orchestrator/dispatch"
	"threadflow/orchestrator/execution"
	"threadflow/orchestrator/maintenance"
	"threadflow/orchestrator/reporting"
	"threadflow/workflow"
)

// newEngine wires the orchestrator from the configuration. notifier is optional (the CLI prints
// progress with one); outboxes are the adapters that can report runs; obs (optional) receives the
// measurements behind /metrics.
func newEngine(cfg Config, log *zap.Logger, st db.Store, outboxes map[string]conversation.Outbox, notifier execution.Notifier,
	obs execution.Observer) *orchestrator.Engine {
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
		Auth:            dispatch.NewAuth(cfg.AllowedUserIDs, cfg.AdminUserIDs),
		Dirs:            dirs(cfg),
		Retention:       cfg.Retention, // pruned by servers only (Engine.Run)
		Disk:            diskGuard(cfg),
		Log:             log,
		Limits:          cfg.limits(),
		Owner:           cfg.ReplicaID,
		LeaseTTL:        cfg.LeaseTTL,
		RequesterAway:   cfg.RequesterDMAfter,
		MaxRecoveries:   cfg.MaxRecoveries,
		Slots:           cfg.Workers,
		MaxParallel:     cfg.MaxParallelNodes,
		DailyBudget:     cfg.DailyBudget,
		Grace:           cfg.ShutdownGrace,
		Notifier:        notifier,
		// Claim only runs this process can report on: a run started from `bot chat` stays with a
		// terminal, a Slack run with a bot connected to Slack.
		ClaimReportableOnly: true,
		Observer:            obs,
		Schedules:           !terminal, // a server fires the schedules; `bot chat` never does
		TriggerObserver:     triggerObserver(obs),
	})
}

// dirs is where runs work, and the workspace contract of this process (docs/deploy.md).
func dirs(cfg Config) execution.Dirs {
	return execution.Dirs{Home: cfg.Home, RepoPath: cfg.RepoPath, Remote: cfg.WorkspaceRemote, Token: cfg.HomeToken, Host: cfg.Host}
}

// diskGuard watches MIN_FREE_DISK on THREADFLOW_HOME, for the workers and for /readyz.
func diskGuard(cfg Config) execution.DiskGuard {
	return execution.DiskGuard{Dir: cfg.Home, MinFree: cfg.MinFreeDisk}
}

// providers creates agent providers by name, "" meaning DEFAULT_PROVIDER.
type providers struct {
	cfg Config
	log *zap.Logger
}

func (p providers) Provider(name string) (execution.Provider, error) {
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
const catalogReload = reporting.CatalogReload

// catalogs re-discovers workflows at most every catalogReload and reports invalid files once per
// change of the problems found: in the log, and to a person on out once someone watches.
type catalogs struct {
	home string
	dirs []string
	log  *zap.Logger

	mu       sync.Mutex
	cat      *workflow.Catalog
	loadedAt time.Time
	lastErrs string
	logged   bool           // the problems of a load were reported once
	out      io.Writer      // where a person reads about broken files; nil until announce
	shown    *problemsShown // a terminal's: what terminals last showed in full; nil for the server
	// loaded, when set, is told of every catalog discovered (the server checks its triggers'
	// secrets); it runs under mu.
	loaded func(cat *workflow.Catalog, out io.Writer, start bool)
}

func newCatalogs(cfg Config, log *zap.Logger) *catalogs {
	return &catalogs{home: cfg.Home, dirs: cfg.WorkflowsDirs, log: log}
}

func (c *catalogs) Catalog() *workflow.Catalog {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cat == nil || time.Since(c.loadedAt) >= catalogReload {
		c.load(false)
	}
	return c.cat
}

// load discovers the workflows and reports their problems when they changed, or at start
// whatever they are; the caller holds c.mu.
func (c *catalogs) load(start bool) {
	cat, errs := workflow.Discover(c.home, c.dirs)
	if msg := errs.Error(); start || msg != c.lastErrs || !c.logged {
		if c.shown != nil {
			c.reportOnce(errs, start)
		} else {
			c.report(errs, start, msg != c.lastErrs || !c.logged)
		}
		c.lastErrs, c.logged = msg, true
	}
	c.cat, c.loadedAt = cat, time.Now()
	if c.loaded != nil {
		c.loaded(cat, c.out, start)
	}
}

// report tells the server's log about problems when they changed (the first load included: the
// scheduler may read the catalog before the bot announces), and out at start and at every change.
func (c *catalogs) report(errs workflow.Errors, start, changed bool) {
	if len(errs) > 0 && changed {
		c.log.Warn("workflow.discover_failed", zap.Int("files", brokenFiles(errs)), zap.String("errors", errs.Error()))
	}
	if c.out == nil || (start && len(errs) == 0) {
		return
	}
	printProblems(c.out, errs)
}

// reportOnce tells a terminal about problems only when they differ from those the last terminal
// command showed (kept in THREADFLOW_HOME), and otherwise, at start, in one line: every
// `bot workflow` command reads the files, and the same list before each output buries it.
// Terminals keep the problems out of their log, which is for warnings about the bot itself.
func (c *catalogs) reportOnce(errs workflow.Errors, start bool) {
	same, err := c.shown.same(errs)
	if err != nil {
		c.log.Warn("workflow.problems_shown_unreadable", zap.Error(err))
	}
	switch {
	case same && start && len(errs) > 0:
		fmt.Fprintln(c.out, problemsReminder(errs))
	case !same:
		printProblems(c.out, errs)
		if err := c.shown.record(errs); err != nil {
			c.log.Warn("workflow.problems_shown_unwritable", zap.Error(err))
		}
	}
}

// printProblems prints every problem of the workflow files, or that there are none any more.
func printProblems(w io.Writer, errs workflow.Errors) {
	if len(errs) == 0 {
		fmt.Fprintf(w, "Every workflow file is valid again.\n")
		return
	}
	fmt.Fprintf(w, "Workflow files with problems are left out until fixed (%s; bot workflow validate FILE checks one):\n", reporting.CatalogReloadText)
	for _, e := range errs {
		fmt.Fprintf(w, "  %s\n", e.Error())
	}
}

// announce reports the current problems on out now, and every later change of them. shown is nil
// for the server, which reports each change in full, in its log too; a terminal passes the
// fingerprint of what terminals last showed.
func (c *catalogs) announce(out io.Writer, shown *problemsShown) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.out, c.shown = out, shown
	c.load(true)
}

// watch re-reads the workflow files every catalogReload until ctx ends, so a broken file is
// reported when it is saved, not only when someone next runs a workflow.
func (c *catalogs) watch(ctx context.Context) {
	t := time.NewTicker(catalogReload)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			c.Catalog()
		}
	}
}

// triggerObserver is obs as a counter of trigger fires, when it counts them (package metrics).
func triggerObserver(obs execution.Observer) maintenance.TriggerObserver {
	if t, ok := obs.(maintenance.TriggerObserver); ok {
		return t
	}
	return nil
}
