package orchestrator

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"

	"threadflow/commands"
	"threadflow/conversation"
	"threadflow/db"
	"threadflow/orchestrator/dispatch"
	"threadflow/orchestrator/execution"
	"threadflow/orchestrator/maintenance"
	"threadflow/orchestrator/reporting"
	"threadflow/workflow"
)

// Store is what the orchestrator needs from a run store: what each of its rooms needs. db/sqlite
// and db/postgres implement it; the state machine it enforces is documented in
// docs/state-machine.md.
type Store interface {
	execution.Store
	reporting.Store
	dispatch.Store
	maintenance.Store
	maintenance.TriggerStore
}

// Config is everything the orchestrator needs from the outside.
type Config struct {
	Store           Store
	Catalogs        dispatch.Catalogs
	Providers       execution.Providers
	DefaultProvider string // DEFAULT_PROVIDER; empty turns free-text chat off
	Outboxes        map[string]conversation.Outbox
	Auth            dispatch.Auth
	Dirs            execution.Dirs
	Disk            execution.DiskGuard // MIN_FREE_DISK on THREADFLOW_HOME; the zero value never refuses
	Log             *zap.Logger
	Limits          commands.Limits // MAX_ARGS_BYTES: what one message may carry
	// LookPath finds the programs script nodes run with (bun, node, python3, uv); nil searches the
	// bot's PATH.
	LookPath func(file string) (string, error)

	Owner         string        // REPLICA_ID
	LeaseTTL      time.Duration // LEASE_TTL
	MaxRecoveries int           // MAX_RECOVERIES
	Slots         int           // WORKERS
	MaxParallel   int           // MAX_PARALLEL_NODES
	DailyBudget   int64         // AGENT_DAILY_BUDGET_USD in nanodollars; 0: none
	Grace         time.Duration // SHUTDOWN_GRACE
	Poll          time.Duration // how often idle workers look for runs queued elsewhere
	Debounce      time.Duration // status message edits
	// GateTimerInterval is the longest wait before gate timers set by other replicas are seen;
	// default 5s.
	GateTimerInterval time.Duration
	Notifier          execution.Notifier // optional extra notifier; the Reporter always reports
	Observer          execution.Observer // measurements (package metrics); optional
	// ClaimReportableOnly makes the workers claim only runs of the platforms in Outboxes (read when
	// Run starts, after adapters registered their outboxes).
	ClaimReportableOnly bool
	// Unattended are terminal platforms whose runs this server executes once no terminal is attached
	// to their conversation (a server: console). See Presence.
	Unattended []string
	// Terminal makes this process a terminal: it executes only the runs of the conversations it
	// attaches to (Engine.Presence.Attach), and keeps the attachments alive while it runs.
	Terminal bool
	// Schedules makes this process fire the workflows' schedules (servers; never the terminal).
	Schedules bool
	// TriggerObserver counts trigger fires and refusals (package metrics); optional.
	TriggerObserver maintenance.TriggerObserver
	// Retention is how long runs are kept (RETENTION, RETENTION_UNFINISHED); a server prunes
	// what is past it every hour (Pruner). Zero, and a terminal, prune nothing.
	Retention db.Retention
	// RequesterAway is REQUESTER_DM_AFTER (reporting.Reporter.RequesterAway).
	RequesterAway time.Duration
}

// Engine is the orchestrator wired together: the dispatcher, the workers that execute runs, the
// rescuer of expired leases, and the reporter that tells chat about runs.
type Engine struct {
	Dispatcher *dispatch.Dispatcher
	Workers    *execution.Workers
	Rescuer    *maintenance.Rescuer
	Reporter   *reporting.Reporter
	Courier    *maintenance.Courier
	Executor   *execution.Executor
	Timers     *maintenance.GateTimers
	Presence   *maintenance.Presence
	// Triggers starts the runs of schedules, webhooks and GitHub events; Scheduler (nil in a
	// terminal) fires the schedules.
	Triggers  *maintenance.Triggers
	Scheduler *maintenance.Scheduler
	Pruner    *maintenance.Pruner

	reportableOnly bool
}

// New wires an Engine from c.
func New(c Config) *Engine {
	if c.LeaseTTL <= 0 {
		c.LeaseTTL = 30 * time.Second
	}
	obs := execution.ObserverOr(c.Observer)
	owner := c.Owner
	if owner == "" {
		owner = "replica-" + db.NewToken()
	}
	courier := &maintenance.Courier{Store: c.Store, Outboxes: c.Outboxes, Log: c.Log, Observe: obs, Owner: owner, Interval: c.GateTimerInterval,
		ClaimTTL: 2 * c.LeaseTTL}
	rep := &reporting.Reporter{Store: c.Store, Outboxes: c.Outboxes, Log: c.Log, Debounce: c.Debounce, Observe: obs, Courier: courier,
		Admins: slices.Sorted(maps.Keys(c.Auth.Admins)), RequesterAway: c.RequesterAway}
	c.Store.SetGroupNotes(rep.GroupNotes) // what runs waiting for a concurrency group are told
	c.Store.SetChildNotes(rep.ChildNotes) // what a child cancelled with its parent shows in its thread
	var notify execution.Notifier = rep
	if c.Notifier != nil {
		notify = fanout{rep, c.Notifier}
	}
	timers := &maintenance.GateTimers{Store: c.Store, Reporter: rep, Log: c.Log, Observe: obs, Interval: c.GateTimerInterval}
	exec := &execution.Executor{Store: c.Store, Providers: c.Providers, Notify: notify, Owing: rep.Owing, Log: c.Log, MaxParallel: c.MaxParallel, Observe: obs, Dirs: c.Dirs, Strays: &execution.Strays{},
		GateTimersChanged: timers.Wake, Disk: c.Disk, LookPath: c.LookPath, DailyBudgetNanos: c.DailyBudget}
	presence := &maintenance.Presence{Store: c.Store, Owner: c.Owner, TTL: c.LeaseTTL, Log: c.Log, Terminal: c.Terminal, Unattended: c.Unattended,
		Home: db.Home{Token: c.Dirs.Token, Owner: c.Owner, Host: c.Dirs.Host, Remote: c.Dirs.RemoteShown()}}
	timers.Presence, courier.Presence = presence, presence
	w := &execution.Workers{Store: c.Store, Exec: exec, Log: c.Log, Owner: c.Owner, LeaseTTL: c.LeaseTTL, Slots: c.Slots, Poll: c.Poll, Grace: c.Grace,
		Disk: c.Disk, Presence: presence}
	exec.WakeWorkers, exec.Workflows, exec.Nested = w.Wake, childWorkflows(c.Catalogs), rep.Nested
	triggers := &maintenance.Triggers{Store: c.Store, Reporter: rep, Dirs: c.Dirs, Limits: c.Limits, Log: c.Log, Observe: c.TriggerObserver,
		Wake: func() { rep.Wake(); w.Wake() }}
	var sched *maintenance.Scheduler
	if c.Schedules && !c.Terminal {
		sched = &maintenance.Scheduler{Triggers: triggers, Catalogs: c.Catalogs, Log: c.Log}
	}
	return &Engine{
		Triggers:       triggers,
		Scheduler:      sched,
		Presence:       presence,
		Pruner:         &maintenance.Pruner{Store: c.Store, Dirs: c.Dirs, Retention: c.Retention, Log: c.Log},
		reportableOnly: c.ClaimReportableOnly,
		Executor:       exec,
		Reporter:       rep,
		Courier:        courier,
		Timers:         timers,
		Workers:        w,
		Rescuer: &maintenance.Rescuer{Store: c.Store, Notify: notify, Log: c.Log, Interval: c.LeaseTTL / 6, MaxRecoveries: c.MaxRecoveries,
			Wake: w.Wake, Observe: obs},
		Dispatcher: &dispatch.Dispatcher{Store: c.Store, Catalogs: c.Catalogs, Reporter: rep, Workers: w, Auth: c.Auth, Dirs: c.Dirs, Log: c.Log, Observe: obs, Limits: c.Limits,
			Assistant: dispatch.Assistant{Providers: c.Providers, DefaultName: c.DefaultProvider}},
	}
}

// Run executes and rescues runs until ctx ends, then shuts down gracefully.
func (e *Engine) Run(ctx context.Context) {
	if e.reportableOnly && !e.Presence.Terminal {
		for p := range e.Reporter.Outboxes {
			e.Presence.Platforms = append(e.Presence.Platforms, p)
		}
	}
	// The courier outlives the rest: runs finishing within the shutdown grace still owe their
	// messages, and it delivers them before the process ends (what it cannot, the next one does).
	cctx, stopCourier := context.WithCancel(context.WithoutCancel(ctx))
	courierDone := make(chan struct{})
	go func() { defer close(courierDone); e.Courier.Run(cctx) }()
	var wg sync.WaitGroup
	wg.Go(func() { e.Presence.Run(ctx) })
	wg.Go(func() { e.Workers.Run(ctx) })
	wg.Go(func() { e.Rescuer.Run(ctx) })
	wg.Go(func() { e.Timers.Run(ctx) })
	if e.Scheduler != nil {
		wg.Go(func() { e.Scheduler.Run(ctx) })
	}
	if !e.Presence.Terminal && !e.Pruner.Retention.Off() {
		wg.Go(func() { e.Pruner.Run(ctx) })
	}
	wg.Wait()
	e.Reporter.SettleAll() // no notice comes any more: no progress is owed after Run returns
	stopCourier()
	<-courierDone
	// Then everything still owed here, with nothing else racing, within the shutdown's notice grace.
	dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), execution.NoticeGrace)
	e.Courier.Drain(dctx)
	cancel()
}

// fanout sends every notice to several notifiers.
type fanout []execution.Notifier

func (f fanout) Notify(ctx context.Context, n execution.Notice) {
	for _, x := range f {
		x.Notify(ctx, n)
	}
}

// childWorkflows finds the workflow of a child run in the catalog as it is now (nil: no catalog).
func childWorkflows(cs dispatch.Catalogs) func(string) (*workflow.Workflow, error) {
	if cs == nil {
		return nil
	}
	return func(name string) (*workflow.Workflow, error) {
		cat := cs.Catalog()
		if wf, ok := cat.Get(name); ok {
			return wf, nil
		}
		if probs := cat.Problems(name); len(probs) > 0 {
			return nil, fmt.Errorf("workflow %s does not load: %v", name, probs)
		}
		return nil, fmt.Errorf("no workflow named %s", name)
	}
}
