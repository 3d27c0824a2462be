package maintenance

import (
	"context"
	"time"

	"go.uber.org/zap"

	"threadflow/db"
	"threadflow/orchestrator/execution"
	"threadflow/orchestrator/reporting"
)

// GateTimers fires the timeouts, reminders and escalations of approval gates. The timers are durable (columns of
// the run, set when the gate is asked), so a restarted process or another replica fires them; the
// store fires each once however many processes look (db.JudgeTimer), and this loop only says so in
// the run's thread.
type GateTimers struct {
	Store    Store
	Reporter *reporting.Reporter
	Log      *zap.Logger
	Observe  execution.Observer
	// Interval is the longest sleep between looks: gates asked by other replicas are found within
	// it. Gates asked here wake the loop at once (Wake). Default 5s.
	Interval time.Duration
	Now      func() time.Time
	// Presence limits the timers fired here to runs this process can report on, as it limits
	// claims (nil: every run).
	Presence *Presence

	wake chan struct{}
}

// Wake makes the loop look for the next timer now: a gate with timers was just asked.
func (g *GateTimers) Wake() {
	select {
	case g.wakeChan() <- struct{}{}:
	default:
	}
}

func (g *GateTimers) wakeChan() chan struct{} {
	if g.wake == nil {
		g.wake = make(chan struct{}, 1)
	}
	return g.wake
}

// Run fires timers until ctx ends.
func (g *GateTimers) Run(ctx context.Context) {
	loop(ctx, g.wakeChan(), g.Once, g.sleep)
}

// sleep is how long to wait for the next due timer, at most Interval.
func (g *GateTimers) sleep(ctx context.Context) time.Duration {
	interval := g.Interval
	if interval <= 0 {
		interval = 5 * time.Second
	}
	reach, ok := g.Presence.Reach()
	if !ok {
		return interval
	}
	next, ok, err := g.Store.NextGateTimer(ctx, reach)
	if err != nil || !ok {
		return interval
	}
	return min(max(next.Sub(g.now()), 0), interval)
}

func (g *GateTimers) now() time.Time {
	if g.Now != nil {
		return g.Now()
	}
	return time.Now()
}

// Once fires what is due and tells each run's thread.
func (g *GateTimers) Once(ctx context.Context) {
	reach, ok := g.Presence.Reach()
	if !ok {
		return
	}
	fired, err := g.Store.FireGateTimers(ctx, reach, func(t db.GateTimer) []db.Owed { return g.Reporter.TimerOwed(t, g.now()) })
	if err != nil && ctx.Err() == nil {
		g.Log.Warn("orchestrator.gate_timers_failed", zap.Error(err))
	}
	g.Log.Debug("orchestrator.gate_timers_checked", zap.Int("fired", len(fired)))
	for _, t := range fired {
		// The timer already fired in the store; its notice must go out even if shutdown began.
		nctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), execution.NoticeGrace)
		g.announce(nctx, t)
		cancel()
	}
}

// announce logs what fired, and for a timeout owes what the timer's transaction could not read:
// the status message with the run's nodes, and the ask-backs' settled buttons.
func (g *GateTimers) announce(ctx context.Context, t db.GateTimer) {
	log := g.Log.With(zap.String("run_id", t.Run.ID), zap.String("node", t.Pause.Node))
	switch t.Kind {
	case db.TimerReminder:
		log.Info("orchestrator.gate_reminder_sent")
		g.Reporter.Wake()
		return
	case db.TimerEscalation:
		log.Info("orchestrator.gate_escalated")
		g.Reporter.Wake()
		return
	}
	log.Info("orchestrator.gate_timed_out", zap.String("on_timeout", t.Pause.OnTimeout))
	execution.ObserverOr(g.Observe).RunStopped(t.Run.Workflow, t.Run.Status)
	g.Reporter.TimedOut(ctx, t)
}
