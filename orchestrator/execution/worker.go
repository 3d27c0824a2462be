package execution

import (
	"context"
	"errors"
	"sync"
	"time"

	"go.uber.org/zap"

	"threadflow/db"
)

// Workers claims queued runs and executes them, at most Slots at once. Each run is held by a lease;
// every third of LeaseTTL one renewal extends the leases of all the runs this replica executes
// (RenewLeases, in batches), and when it says a lease is lost, that run's processes are stopped at
// once. Workers never decide that a run crashed: the Rescuer does, from expired leases.
type Workers struct {
	Store    Store
	Exec     *Executor
	Log      *zap.Logger
	Owner    string        // replica id written as lease owner
	LeaseTTL time.Duration // default 30s
	Slots    int           // runs at once; default 8
	Poll     time.Duration // how often to look for work other replicas queued; default 1s
	Grace    time.Duration // SHUTDOWN_GRACE: how long running nodes may finish at shutdown
	// Presence limits claims to the runs this process can report on (nil: every run).
	Presence Reacher
	// Disk stops claims while THREADFLOW_HOME's disk has less than MIN_FREE_DISK free.
	Disk DiskGuard

	lowDisk bool // claims are stopped for lack of disk space; touched only by Run
	wake    chan struct{}
	mu      sync.Mutex
	active  map[string]*localRun // by run id: the one local execution of each run, for Stop
	ended   chan struct{}        // closed and replaced when a local execution ends; see Ended
	wg      sync.WaitGroup
	initOne sync.Once
}

// Reacher says which runs this process may claim now; the Presence of package maintenance decides
// it. ok false means none.
type Reacher interface {
	Reach() (r db.Reach, ok bool)
}

// errShutdown is the cause given to executions stopped by a graceful shutdown.
var errShutdown = errors.New("replica shutting down")

// errAbandoned is the cause given to an execution whose run was abandoned by a person.
var errAbandoned = errors.New("run abandoned")

func (w *Workers) init() {
	w.initOne.Do(func() {
		w.wake = make(chan struct{}, 1)
		w.active = map[string]*localRun{}
		w.ended = make(chan struct{})
		if w.LeaseTTL <= 0 {
			w.LeaseTTL = 30 * time.Second
		}
		if w.Slots <= 0 {
			w.Slots = 8
		}
		if w.Poll <= 0 {
			w.Poll = time.Second
		}
	})
}

// Wake tells the workers that a run was queued, so they claim it now instead of at the next poll.
func (w *Workers) Wake() {
	w.init()
	select {
	case w.wake <- struct{}{}:
	default:
	}
}

// Stop cancels the local execution of a run, if this replica runs it (an abandon).
func (w *Workers) Stop(runID string) {
	w.init()
	w.mu.Lock()
	defer w.mu.Unlock()
	if x := w.active[runID]; x != nil {
		x.cancel(errAbandoned)
	}
}

// Run claims and executes runs until ctx ends, then shuts down gracefully: it stops claiming, lets
// running nodes finish for Grace, then hands unfinished runs back to the queue.
func (w *Workers) Run(ctx context.Context) {
	w.init()
	runCtx, stopRuns := context.WithCancelCause(context.WithoutCancel(ctx))
	defer stopRuns(nil)
	// Leases are renewed until the last execution ended, through the shutdown's grace.
	renewCtx, stopRenew := context.WithCancel(context.WithoutCancel(ctx))
	renewed := make(chan struct{})
	go func() { defer close(renewed); w.renewLoop(renewCtx) }()
	defer func() { stopRenew(); <-renewed }()
	sem := make(chan struct{}, w.Slots)
	for ctx.Err() == nil {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			continue
		}
		if !w.diskAllowsClaims() {
			<-sem
			w.idle(ctx, db.ErrNoQueuedRun)
			continue
		}
		slots := 1 + takeFree(sem, db.MaxClaimBatch-1)
		runs, err := w.claim(ctx, slots)
		for range slots - len(runs) {
			<-sem
		}
		if err != nil {
			w.idle(ctx, err)
			continue
		}
		for _, run := range runs {
			w.start(runCtx, run, sem)
		}
	}
	w.drain(stopRuns)
}

// diskAllowsClaims checks MIN_FREE_DISK before each claim and says once when claims stop and when
// they start again: a run started on a full disk would fail to keep its output and its record.
func (w *Workers) diskAllowsClaims() bool {
	var low *LowDiskError
	err := w.Disk.Check()
	if err != nil && !errors.As(err, &low) {
		err = nil // the free space cannot be read: /readyz says so, and claims go on as before
	}
	switch {
	case err != nil && !w.lowDisk:
		w.Log.Error("orchestrator.claims_stopped", zap.String("reason", err.Error()),
			zap.String("fix", "free disk space under THREADFLOW_HOME, or lower MIN_FREE_DISK"))
	case err == nil && w.lowDisk:
		w.Log.Info("orchestrator.claims_resumed")
	}
	w.lowDisk = err != nil
	if err == nil {
		if rerr := w.Disk.ensureReserve(); rerr != nil {
			w.Log.Warn("orchestrator.disk_reserve_failed", zap.Error(rerr))
		}
	}
	return err == nil
}

// takeFree takes up to n more slots that are free right now, without waiting, and says how many.
func takeFree(sem chan struct{}, n int) int {
	for i := range n {
		select {
		case sem <- struct{}{}:
		default:
			return i
		}
	}
	return n
}

// claim takes up to n of the oldest queued runs in this process's reach.
func (w *Workers) claim(ctx context.Context, n int) ([]db.Run, error) {
	reach, ok := db.Reach{}, true
	if w.Presence != nil {
		reach, ok = w.Presence.Reach()
	}
	if !ok {
		return nil, db.ErrNoQueuedRun
	}
	return w.Store.ClaimRuns(ctx, w.Owner, w.LeaseTTL, reach, n)
}

// idle waits for a wake-up or the next poll after finding nothing to claim.
func (w *Workers) idle(ctx context.Context, err error) {
	if !errors.Is(err, db.ErrNoQueuedRun) && ctx.Err() == nil {
		w.Log.Warn("orchestrator.claim_failed", zap.Error(err))
	}
	t := time.NewTimer(w.Poll)
	defer t.Stop()
	select {
	case <-w.wake:
	case <-t.C:
	case <-ctx.Done():
	}
}

// localRun is one local execution of a claimed run. A run can be claimed again while the
// execution that paused it is still reporting (a gate answered at once), so entries are told apart
// by identity, never by run id alone.
type localRun struct {
	cancel context.CancelCauseFunc
	lease  db.Lease
	lastOK time.Time // when the lease was last known extended; guarded by Workers.mu
}

func (w *Workers) start(ctx context.Context, run db.Run, sem chan struct{}) {
	ctx, cancel := context.WithCancelCause(ctx)
	x := &localRun{cancel: cancel, lease: run.Lease(), lastOK: time.Now()}
	sl := &slot{sem: sem, held: true} // lent while its nodes wait for child runs (slot.go)
	ctx = withSlot(ctx, sl)
	w.mu.Lock()
	w.active[run.ID] = x
	w.mu.Unlock()
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		defer sl.done()
		defer w.forget(run.ID, x)
		w.execute(ctx, cancel, run)
	}()
}

// forget ends an execution and drops it, unless a newer execution of the run replaced it, and
// wakes whoever waits in Ended.
func (w *Workers) forget(runID string, x *localRun) {
	x.cancel(nil)
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.active[runID] == x {
		delete(w.active, runID)
	}
	close(w.ended)
	w.ended = make(chan struct{})
}

// Ended returns a channel that is closed when the next local execution of any run ends, after
// its last write. A caller waiting for a run to stop takes the channel, reads the run, and waits
// on the channel only if the run still goes on, so no ending is missed between the two.
func (w *Workers) Ended() <-chan struct{} {
	w.init()
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ended
}

func (w *Workers) execute(ctx context.Context, cancel context.CancelCauseFunc, run db.Run) {
	log := w.Log.With(zap.String("run_id", run.ID), zap.String("workflow", run.Workflow))
	log.Info("orchestrator.run_claimed", zap.Int("recoveries", run.Recoveries))
	err := w.Exec.Execute(ctx, run)
	cancel(nil)
	switch cause := context.Cause(ctx); {
	case err == nil:
		log.Info("orchestrator.run_stopped")
	case errors.Is(cause, errShutdown):
		w.release(run, log)
	case errors.Is(err, db.ErrLeaseLost) || errors.Is(cause, db.ErrLeaseLost):
		w.leaseLost(run, log, err)
	case errors.Is(cause, errAbandoned) || errors.Is(err, errAbandoned): // by a person, or by a cancel node
		log.Info("orchestrator.run_abandoned")
	case errors.Is(err, errUnrecorded):
		w.giveUp(run, log, err)
	default:
		log.Error("orchestrator.run_interrupted", zap.Error(err))
	}
}

// renewLoop extends the leases of every local execution every third of LeaseTTL until ctx ends.
func (w *Workers) renewLoop(ctx context.Context) {
	t := time.NewTicker(w.LeaseTTL / 3)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		held := w.held()
		for len(held) > 0 && ctx.Err() == nil {
			n := min(len(held), db.MaxRenewBatch)
			w.renew(ctx, held[:n])
			held = held[n:]
		}
	}
}

// held lists the executions whose leases this replica renews.
func (w *Workers) held() []*localRun {
	w.mu.Lock()
	defer w.mu.Unlock()
	out := make([]*localRun, 0, len(w.active))
	for _, x := range w.active {
		out = append(out, x)
	}
	return out
}

// renew extends the leases of xs in one transaction. A lost lease stops its run's processes at
// once; a database error is retried at the next tick until a lease would have expired, then that
// lease is treated as lost.
func (w *Workers) renew(ctx context.Context, xs []*localRun) {
	ls := make([]db.Lease, len(xs))
	for i, x := range xs {
		ls[i] = x.lease
	}
	start := time.Now()
	lost, err := w.Store.RenewLeases(ctx, ls, w.LeaseTTL)
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		for _, x := range xs {
			if time.Since(x.lastOK) >= w.LeaseTTL {
				w.Log.Warn("orchestrator.heartbeat_failed", zap.String("run_id", x.lease.RunID), zap.Error(err))
				x.cancel(db.ErrLeaseLost)
			}
		}
		return
	}
	gone := make(map[string]bool, len(lost))
	for _, l := range lost {
		gone[l.Token] = true
	}
	for _, x := range xs {
		if gone[x.lease.Token] {
			x.cancel(db.ErrLeaseLost)
			continue
		}
		x.lastOK = start
	}
}

// drain waits Grace for running executions, then stops the rest and lets them hand back.
func (w *Workers) drain(stopRuns context.CancelCauseFunc) {
	done := make(chan struct{})
	go func() { w.wg.Wait(); close(done) }()
	t := time.NewTimer(w.Grace)
	defer t.Stop()
	select {
	case <-done:
		return
	case <-t.C:
	}
	stopRuns(errShutdown)
	<-done
}

// giveUp ends the lease of a run whose record could not be written, so it expires now instead of
// after LEASE_TTL: the rescuer (here, or on a replica whose database accepts writes) re-queues the
// run and counts the recovery. When even this write fails, the lease expires on its own.
func (w *Workers) giveUp(run db.Run, log *zap.Logger, cause error) {
	log.Error("orchestrator.run_interrupted", zap.Error(cause))
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := w.Store.Heartbeat(ctx, run.Lease(), 0); err != nil {
		log.Warn("orchestrator.lease_give_up_failed", zap.Error(err))
		return
	}
	log.Info("orchestrator.lease_given_up")
}

// leaseLost logs the end of an execution whose lease was lost. A run that a person cancelled in
// another process (the dashboard, another terminal) loses its lease by design, which is no warning:
// a terminal executing the run would print it among the bot's replies.
func (w *Workers) leaseLost(run db.Run, log *zap.Logger, err error) {
	var te *db.TransitionError
	cancelled := errors.As(err, &te) && te.Found == db.StatusCancelled
	if !cancelled {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		cur, gerr := w.Store.GetRun(ctx, run.ID)
		cancelled = gerr == nil && cur.Status == db.StatusCancelled
	}
	if cancelled {
		log.Info("orchestrator.run_abandoned", zap.String("by", "another process"))
		return
	}
	log.Warn("orchestrator.lease_lost", zap.Error(err))
}

// release hands a run back to the queue without counting a recovery, so another replica
// continues it at once.
func (w *Workers) release(run db.Run, log *zap.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := w.Store.ReleaseRun(ctx, run.Lease()); err != nil {
		if te := (*db.TransitionError)(nil); errors.As(err, &te) && te.Found == db.StatusCancelled {
			log.Info("orchestrator.run_abandoned", zap.String("by", "another process")) // nothing to hand back
			return
		}
		log.Warn("orchestrator.release_failed", zap.Error(err))
		return
	}
	log.Info("orchestrator.run_released")
}
