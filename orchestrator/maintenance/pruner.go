package maintenance

import (
	"context"
	"time"

	"go.uber.org/zap"

	"threadflow/db"
	"threadflow/orchestrator/execution"
)

// DefaultPruneInterval is how often a server prunes runs past their retention.
const DefaultPruneInterval = time.Hour

// Pruner deletes runs past their retention (RETENTION, RETENTION_UNFINISHED) with everything they
// own, in the database (Store.Prune: small batches, each run once whichever replicas prune at the
// same time) and on disk (their directories under THREADFLOW_HOME/runs, and REPO_PATH's worktrees
// of them). Only servers run it.
type Pruner struct {
	Store     PruneStore
	Dirs      execution.Dirs
	Retention db.Retention
	Log       *zap.Logger
	Interval  time.Duration // DefaultPruneInterval when unset
}

// PruneStore is what pruning needs from a run store.
type PruneStore interface {
	Prune(ctx context.Context, p db.PruneRequest) (db.PruneReport, error)
}

// Run prunes until ctx ends: once at start, then every Interval.
func (p *Pruner) Run(ctx context.Context) {
	interval := p.Interval
	if interval <= 0 {
		interval = DefaultPruneInterval
	}
	loop(ctx, nil, func(ctx context.Context) {
		if _, err := p.Once(ctx, false); err != nil && ctx.Err() == nil {
			p.Log.Warn("maintenance.prune_failed", zap.Error(err))
		}
	}, func(context.Context) time.Duration { return interval })
}

// Once prunes what is past retention now, or with dry only says what it would delete. The files of
// each batch are deleted after the batch commits: a stop in between leaves files without a run,
// never a run without its files.
func (p *Pruner) Once(ctx context.Context, dry bool) (db.PruneReport, error) {
	if p.Retention.Off() {
		return db.PruneReport{}, nil
	}
	start := time.Now()
	got, err := p.Store.Prune(ctx, db.PruneRequest{Retention: p.Retention, DryRun: dry, Gone: func(ids []string) {
		if err := p.Dirs.Remove(ctx, ids); err != nil {
			p.Log.Warn("maintenance.prune_files_failed", zap.Strings("runs", ids), zap.Error(err))
		}
	}})
	if got.Runs > 0 && !dry {
		p.Log.Info("maintenance.pruned", zap.Int64("runs", got.Runs), zap.Int64("events", got.Events), zap.Int64("bytes", got.Bytes),
			zap.Duration("took", time.Since(start)))
	}
	return got, err
}
