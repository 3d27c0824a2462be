package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/dustin/go-humanize"

	"threadflow/db"
	"threadflow/orchestrator/maintenance"
	"threadflow/orchestrator/reporting"
)

const pruneUsage = `Usage: bot prune [--dry-run]

Deletes the runs past their retention now, as a server does every hour: completed and cancelled
runs RETENTION (default 90d) after they finished, failed and paused runs RETENTION_UNFINISHED
(default 365d) after their last change, each with its events, transcript messages, sessions and
its directory under THREADFLOW_HOME/runs (child runs go with their parent), and the handled
chat events (de-duplication records) received before RETENTION. It says how many runs and events
it deleted and the bytes they held. Safe beside running servers: each run is deleted once.

  --dry-run  say what it would delete, and delete nothing
`

// pruneCmd is `bot prune`.
func pruneCmd(ctx context.Context, inv invocation, args []string) error {
	fs := flag.NewFlagSet("prune", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	dry := fs.Bool("dry-run", false, "")
	if err := fs.Parse(args); err != nil || fs.NArg() > 0 {
		if err == flag.ErrHelp {
			fmt.Fprint(inv.stdout, pruneUsage)
			return nil
		}
		return &usageError{"bot prune takes only --dry-run; bot prune --help says more"}
	}
	cfg, log, st, err := openLocal(ctx, inv, "prune", nil)
	if err != nil {
		return err
	}
	defer func() { _ = st.Close(); _ = log.Sync() }()
	if cfg.Retention.Off() {
		fmt.Fprintln(inv.stdout, "RETENTION and RETENTION_UNFINISHED are off: runs are kept forever, nothing to prune.")
		return nil
	}
	p := &maintenance.Pruner{Store: st, Dirs: dirs(cfg), Retention: cfg.Retention, Log: log}
	got, err := p.Once(ctx, *dry)
	if err != nil {
		return err
	}
	fmt.Fprintln(inv.stdout, pruneSummary(got, cfg.Retention, *dry))
	return nil
}

// pruneSummary says what a prune deleted, or would delete, and which rules it applied.
func pruneSummary(r db.PruneReport, ret db.Retention, dry bool) string {
	verb := "Deleted"
	if dry {
		verb = "Would delete"
	}
	s := fmt.Sprintf("%s %d %s, %d %s, %s (%s)", verb, r.Runs, plural(r.Runs, "run", "runs"), r.Events, plural(r.Events, "event", "events"),
		humanize.Bytes(uint64(max(r.Bytes, 0))), reporting.KeptFor(ret))
	if r.Inbound > 0 {
		s += fmt.Sprintf("; %d handled chat %s received before RETENTION", r.Inbound, plural(r.Inbound, "event", "events"))
	}
	if dry {
		s += "; nothing deleted (dry run)"
	}
	return s + "."
}

func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
