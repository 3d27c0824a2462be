package db

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// Retention is how long runs are kept (RETENTION, RETENTION_UNFINISHED); a zero duration keeps
// those runs forever.
type Retention struct {
	// Finished: completed and cancelled runs, counted from their finish.
	Finished time.Duration
	// Unfinished: failed and paused runs, counted from their last change.
	Unfinished time.Duration
}

// DefaultRetention is the retention when the settings do not say.
var DefaultRetention = Retention{Finished: 90 * 24 * time.Hour, Unfinished: 365 * 24 * time.Hour}

// Off reports whether r keeps every run.
func (r Retention) Off() bool { return r.Finished <= 0 && r.Unfinished <= 0 }

// PruneRequest is one Prune.
type PruneRequest struct {
	Retention Retention
	// DryRun counts what the prune would delete and deletes nothing.
	DryRun bool
	// Gone, when set, is told the ids of each batch of runs deleted, after its commit: the caller
	// deletes their files. It is not called on a dry run.
	Gone func(ids []string)
}

// PruneReport is what a prune deleted, or would delete.
type PruneReport struct {
	Runs, Events int64
	Bytes        int64 // what the rows held, as the engine stores it (Dialect.Size)
	// Inbound: handled inbound events (the de-duplication records of chat events) received
	// before RETENTION; a platform redelivers an event within minutes, not months.
	Inbound int64
}

func (p *PruneReport) add(o PruneReport) {
	p.Runs, p.Events, p.Bytes, p.Inbound = p.Runs+o.Runs, p.Events+o.Events, p.Bytes+o.Bytes, p.Inbound+o.Inbound
}

// Prune deletes the runs past their retention with everything they own (runOwned), MaxPruneBatch
// runs per transaction, until none is left; runs another process is pruning at the same time are
// passed over (each run is deleted once). Runs holding something they must keep stay (runKept).
func (m *Machine) Prune(ctx context.Context, p PruneRequest) (PruneReport, error) {
	now := m.Now()
	if p.DryRun {
		return m.pruneDry(ctx, p.Retention, now)
	}
	var total PruneReport
	for {
		batch, ids, err := m.pruneBatch(ctx, p.Retention, now)
		if err != nil {
			return total, fmt.Errorf("prune runs: %w", err)
		}
		if len(ids) == 0 {
			total.Inbound, err = m.pruneInbound(ctx, p.Retention, now)
			return total, err
		}
		total.add(batch)
		if p.Gone != nil {
			p.Gone(ids)
		}
	}
}

// pruneBatch deletes up to MaxPruneBatch runs past r at now in one transaction and says which.
func (m *Machine) pruneBatch(ctx context.Context, r Retention, now time.Time) (PruneReport, []string, error) {
	var (
		out PruneReport
		ids []string
	)
	if m.Dialect.DeletingCTEs {
		return m.pruneBatchInOne(ctx, r, now)
	}
	err := m.Driver.InTx(ctx, func(tx DriverTx) error {
		ids = nil
		for _, st := range m.Dialect.PruneCandidates(r, now, MaxPruneBatch) {
			if err := tx.QueryStrings(ctx, st.SQL, st.Args, &ids); err != nil {
				return err
			}
			if len(ids) >= MaxPruneBatch { // the rest wait for the next batch
				ids = ids[:MaxPruneBatch]
				break
			}
		}
		if len(ids) == 0 {
			return nil
		}
		children := m.Dialect.PruneDescendants(ids) // they go with their parent
		if err := tx.QueryStrings(ctx, children.SQL, children.Args, &ids); err != nil {
			return err
		}
		var err error
		if out, err = m.pruneCount(ctx, tx, int64(len(ids)), inRuns(ids)); err != nil {
			return err
		}
		for _, st := range m.Dialect.PruneDeletes(ids) {
			if _, err := tx.Exec(ctx, st.SQL, st.Args); err != nil {
				return err
			}
		}
		return nil
	})
	return out, ids, err
}

// pruneBatchInOne is pruneBatch as one statement (Dialect.PruneBatch): one round trip per batch.
func (m *Machine) pruneBatchInOne(ctx context.Context, r Retention, now time.Time) (PruneReport, []string, error) {
	var (
		out  PruneReport
		gone string
	)
	st := m.Dialect.PruneBatch(r, now, MaxPruneBatch)
	if st.SQL == "" {
		return PruneReport{}, nil, nil
	}
	err := m.Driver.InTx(ctx, func(tx DriverTx) error {
		if g := m.Dialect.ForceGenericPlan; g != "" { // its custom plans took longer to make than to run
			if _, err := tx.Exec(ctx, g, nil); err != nil {
				return err
			}
		}
		return tx.QueryRow(ctx, st.SQL, st.Args, &gone, &out.Events, &out.Bytes)
	})
	if err != nil {
		return PruneReport{}, nil, err
	}
	ids := strings.Fields(gone)
	out.Runs = int64(len(ids))
	return out, ids, nil
}

// pruneInbound deletes the handled inbound events received before RETENTION, MaxInboundPruneBatch
// per statement, and says how many.
func (m *Machine) pruneInbound(ctx context.Context, r Retention, now time.Time) (int64, error) {
	if r.Finished <= 0 {
		return 0, nil
	}
	var total int64
	for {
		q, args := m.Dialect.PruneInbound(now.Add(-r.Finished), MaxInboundPruneBatch)
		var n int64
		err := m.Driver.InTx(ctx, func(tx DriverTx) error {
			var err error
			n, err = tx.Exec(ctx, q, args)
			return err
		})
		if err != nil {
			return total, fmt.Errorf("prune inbound events: %w", err)
		}
		total += n
		if n < MaxInboundPruneBatch {
			return total, nil
		}
	}
}

// pruneDry counts what Prune would delete at now, deleting nothing.
func (m *Machine) pruneDry(ctx context.Context, r Retention, now time.Time) (PruneReport, error) {
	var total PruneReport
	if r.Finished > 0 {
		q, args := m.Dialect.CountPrunableInbound(now.Add(-r.Finished))
		if err := m.Driver.InTx(ctx, func(tx DriverTx) error { return tx.QueryRow(ctx, q, args, &total.Inbound) }); err != nil {
			return total, fmt.Errorf("prune inbound events (dry run): %w", err)
		}
	}
	for _, c := range retentionClasses {
		keep := c.keep(r)
		if keep <= 0 {
			continue
		}
		in := pastRetentionRuns(c, now.Add(-keep))
		err := m.Driver.InTx(ctx, func(tx DriverTx) error {
			var runs int64
			q := m.Dialect.Query()
			if err := tx.QueryRow(ctx, "SELECT COUNT(*) FROM runs WHERE "+in(q, "id"), q.Args, &runs); err != nil {
				return err
			}
			got, err := m.pruneCount(ctx, tx, runs, in)
			total.add(got)
			return err
		})
		if err != nil {
			return total, fmt.Errorf("prune runs (dry run): %w", err)
		}
	}
	return total, nil
}

// pruneCount counts what deleting the runs in selects deletes.
func (m *Machine) pruneCount(ctx context.Context, tx DriverTx, runs int64, in func(q *SQL, col string) string) (PruneReport, error) {
	out := PruneReport{Runs: runs}
	q, args := m.Dialect.pruneCount(in)
	err := tx.QueryRow(ctx, q, args, &out.Events, &out.Bytes)
	return out, err
}
