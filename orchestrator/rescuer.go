package orchestrator

import (
	"context"
	"time"

	"go.uber.org/zap"

	"threadflow/db"
)

// Rescuer re-queues running runs whose lease expired: their worker died or was cut off. The store
// counts each rescue without node progress and fails the run once MaxRecoveries is exceeded, so a
// run that crashes its worker at the same node every time stops instead of looping forever.
type Rescuer struct {
	Store         Store
	Notify        Notifier
	Log           *zap.Logger
	Interval      time.Duration // how often to look; default a third of the lease TTL
	MaxRecoveries int
	Wake          func() // tells local workers there is work
	Observe       Observer
}

// Run rescues until ctx ends.
func (r *Rescuer) Run(ctx context.Context) {
	t := time.NewTicker(r.Interval)
	defer t.Stop()
	for {
		r.Once(ctx)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// noticeGrace bounds how long a notice of a store write already made may take once shutdown began.
const noticeGrace = 10 * time.Second

// notifyFailed tells the run's thread that it failed. The run is already failed in the store, so
// the notice must not be dropped because the engine is shutting down (ctx cancelled): the thread
// would otherwise never learn why the run stopped or how to resume it.
func (r *Rescuer) notifyFailed(ctx context.Context, run db.Run) {
	nctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), noticeGrace)
	defer cancel()
	r.Notify.Notify(nctx, Notice{Kind: NoticeFailed, Run: run})
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
		observerOr(r.Observe).Rescued(len(rescued))
	}
	for _, res := range rescued {
		log := r.Log.With(zap.String("run_id", res.Run.ID), zap.String("prev_owner", res.PrevOwner), zap.Int("recoveries", res.Run.Recoveries))
		if res.Exhausted {
			log.Warn("orchestrator.recovery_budget_exhausted")
			observerOr(r.Observe).RunStopped(res.Run.Workflow, res.Run.Status)
			r.notifyFailed(ctx, res.Run)
			continue
		}
		log.Info("orchestrator.run_rescued")
	}
	if len(rescued) > 0 && r.Wake != nil {
		r.Wake()
	}
}
