package maintenance

import (
	"context"
	"time"

	"go.uber.org/zap"

	"threadflow/db"
	"threadflow/orchestrator/execution"
)

// Rescuer re-queues running runs whose lease expired: their worker died or was cut off. The store
// counts each rescue without node progress and fails the run once MaxRecoveries is exceeded, so a
// run that crashes its worker at the same node every time stops instead of looping forever.
type Rescuer struct {
	Store         Store
	Notify        execution.Notifier
	Log           *zap.Logger
	Interval      time.Duration // longest wait between looks (default 5s); sooner when a lease is due to expire
	MaxRecoveries int
	Wake          func() // tells local workers there is work
	Observe       execution.Observer
}

// Run rescues until ctx ends. After each look it waits until just past the next lease expiry the
// store knows of, or Interval if that is sooner: a replica that died is taken over as its leases
// expire, not up to an Interval later (BENCHMARKS.md, recovery). Live replicas renew every third
// of the TTL, so a healthy cluster still wakes the rescuer about once an Interval.
func (r *Rescuer) Run(ctx context.Context) {
	loop(ctx, nil, r.Once, r.sleep)
}

// pastExpiry is how long after a lease's expiry the rescuer looks: a lease expires when its time is
// before now, and the store keeps microseconds.
const pastExpiry = time.Millisecond

// sleep is how long to wait before the next look: until just past the next lease expiry, at most
// Interval (5s when unset: a sixth of the default LEASE_TTL). A failed read waits Interval.
func (r *Rescuer) sleep(ctx context.Context) time.Duration {
	interval := r.Interval
	if interval <= 0 {
		interval = 5 * time.Second
	}
	next, ok, err := r.Store.NextLeaseExpiry(ctx)
	if err != nil || !ok {
		return interval
	}
	return min(max(time.Until(next)+pastExpiry, 0), interval)
}

// notifyFailed tells the run's thread that it failed. The run is already failed in the store, so
// the notice must not be dropped because the engine is shutting down (ctx cancelled): the thread
// would otherwise never learn why the run stopped or how to resume it.
func (r *Rescuer) notifyFailed(ctx context.Context, run db.Run) {
	nctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), execution.NoticeGrace)
	defer cancel()
	r.Notify.Notify(nctx, execution.Notice{Kind: execution.NoticeFailed, Run: run})
}

// Once performs one rescue pass.
func (r *Rescuer) Once(ctx context.Context) {
	rescued, err := r.Store.RescueExpired(ctx, r.MaxRecoveries)
	if err != nil {
		if ctx.Err() == nil {
			r.Log.Warn("orchestrator.rescue_failed", zap.Error(err))
		}
		return
	}
	if len(rescued) > 0 {
		execution.ObserverOr(r.Observe).Rescued(len(rescued))
	}
	for _, res := range rescued {
		log := r.Log.With(zap.String("run_id", res.Run.ID), zap.String("prev_owner", res.PrevOwner), zap.Int("recoveries", res.Run.Recoveries))
		if res.Exhausted {
			log.Warn("orchestrator.recovery_budget_exhausted")
			execution.ObserverOr(r.Observe).RunStopped(res.Run.Workflow, res.Run.Status)
			r.notifyFailed(ctx, res.Run)
			continue
		}
		log.Info("orchestrator.run_rescued")
	}
	if len(rescued) > 0 && r.Wake != nil {
		r.Wake()
	}
}
