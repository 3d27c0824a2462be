package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"threadflow/adapters/web"
	"threadflow/conversation"
	"threadflow/db"
)

// The scale scenario's history: finished runs at each size, beside scalePaused paused ones (a
// fifth of them in statusConversation), and scalePruned runs past RETENTION pruned at each size.
var scaleSizes = []int{1_000, 10_000, 100_000}

const (
	scalePaused  = 10_000
	scalePruned  = 1_000
	scaleSamples = 30 // timed requests per figure; p50 and p99 of them
	scaleWarmup  = 6  // untimed requests before them (sample)
	scaleCLI     = 5  // `bot workflow runs --json` processes per size
)

// scale builds histories of 1,000, 10,000 and 100,000 finished runs beside 10,000 paused ones,
// with bulk SQL at run time, and at each size times what grows with history if anything does:
// the dashboard's runs page, /workflow status of a conversation with 2,000 paused runs, `bot
// workflow runs --json`, the database's size per 1,000 runs and retention's throughput. Each
// figure stands beside its floor, the single indexed query it rests on, timed in the same minute.
func (b *bench) scale(ctx context.Context, d *database) ([]row, error) {
	r, err := newRig(ctx, d, map[string]string{"bench-three": chainWorkflow("bench-three", 3)})
	if err != nil {
		return nil, err
	}
	defer r.close()
	base, err := dbSize(ctx, d) // the empty database: what its size per run leaves out
	if err != nil {
		return nil, err
	}
	now := time.Now()
	if err := bulk(ctx, d, now, fill{prefix: "p", first: 1, n: b.n(scalePaused), status: "paused", age: time.Hour, span: 30 * 24 * time.Hour, inConv: 5}); err != nil {
		return nil, err
	}
	srv, err := web.New(web.Config{Store: r.store, Log: r.log, Retention: db.DefaultRetention})
	if err != nil {
		return nil, err
	}
	defer srv.Close()
	bin, err := b.bot(ctx)
	if err != nil {
		return nil, err
	}
	var rows []row
	built := 0
	for _, size := range scaleSizes {
		size = b.n(size)
		if err := bulk(ctx, d, now, fill{prefix: "f", first: built + 1, n: size - built, status: "completed", age: 24 * time.Hour,
			span: 80 * 24 * time.Hour, inConv: 100}); err != nil {
			return nil, err
		}
		built = size
		b.logf("%d finished runs, %d paused", size, b.n(scalePaused))
		got, err := b.scaleRows(ctx, r, srv.Handler(), bin, size, base)
		if err != nil {
			return nil, err
		}
		rows = append(rows, got...)
	}
	return rows, nil
}

// scaleRows measures one size.
func (b *bench) scaleRows(ctx context.Context, r *rig, h http.Handler, bin string, size int, base int64) ([]row, error) {
	d, st := r.db, r.store
	at := fmt.Sprintf(" at %d finished runs", size)
	out := func(metric, figure, floor string) row {
		return row{scenario: "scale", engine: d.engine, metric: metric + at, figure: figure, floor: floor, command: reproduce("scale", d.engine)}
	}
	var rows []row

	page, err := sample(scaleSamples, func() error {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequestWithContext(ctx, http.MethodGet, "/", nil))
		if rec.Code != http.StatusOK {
			return fmt.Errorf("GET / = %d: %s", rec.Code, rec.Body)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	list, err := sample(scaleSamples, func() error { _, err := st.ListRuns(ctx, db.RunFilter{Limit: 51, WithoutSource: true}); return err })
	if err != nil {
		return nil, err
	}
	counts, err := sample(scaleSamples, func() error { _, err := st.CountRuns(ctx, db.RunFilter{Limit: 1000}); return err })
	if err != nil {
		return nil, err
	}
	exact, err := sample(scaleSamples, func() error { _, err := st.CountRuns(ctx, db.RunFilter{}); return err })
	if err != nil {
		return nil, err
	}
	rows = append(rows, out("dashboard runs page (list of 50 + counts per state), p50 / p99",
		ms(percentile(page, 50))+" / "+ms(percentile(page, 99)),
		ms(percentile(list, 50))+" (the list's query) + "+ms(percentile(counts, 50))+" (the counts' query, up to 1,000 per state; an exact GROUP BY: "+
			ms(percentile(exact, 50))+")"))

	msg := conversation.Message{Address: conversation.Address{Platform: benchPlatform, ChannelID: "C1"}, UserID: benchPlatform + ":u1", Text: "/workflow status"}
	status, err := sample(scaleSamples, func() error { r.engine.Dispatcher.Handle(ctx, msg); return nil })
	if err != nil {
		return nil, err
	}
	active, err := sample(scaleSamples, func() error {
		_, err := st.ListRuns(ctx, db.RunFilter{InConversation: statusConversation, Statuses: []db.Status{db.StatusQueued, db.StatusRunning, db.StatusPaused}, Limit: 50})
		return err
	})
	if err != nil {
		return nil, err
	}
	rows = append(rows, out(fmt.Sprintf("/workflow status of a conversation with %d paused runs (50 listed), p50", b.n(scalePaused)/5),
		ms(percentile(status, 50)), ms(percentile(active, 50))+" (its 50 active runs' query)"))

	runs, err := sample(b.n(scaleCLI), func() error { return runBot(ctx, bin, d, "workflow", "runs", "--json", "--limit", "20") })
	if err != nil {
		return nil, err
	}
	startup, err := sample(b.n(scaleCLI), func() error { return runBot(ctx, bin, d, "workflow", "list", "--json") })
	if err != nil {
		return nil, err
	}
	twenty, err := sample(scaleSamples, func() error { _, err := st.ListRuns(ctx, db.RunFilter{Limit: 20, WithoutSource: true}); return err })
	if err != nil {
		return nil, err
	}
	rows = append(rows, out("`bot workflow runs --json --limit 20`, real binary, p50", ms(percentile(runs, 50)),
		ms(percentile(startup, 50))+" (`bot workflow list --json`: start-up, no run read) + "+ms(percentile(twenty, 50))+" (the query)"))

	size2, err := dbSize(ctx, d)
	if err != nil {
		return nil, err
	}
	total := size + b.n(scalePaused)
	rows = append(rows, out("database size per 1,000 runs (4 events each)", kb((size2-base)*1000/int64(total)), "-"))

	pruned, floor, err := b.pruneRates(ctx, r, size)
	if err != nil {
		return nil, err
	}
	rows = append(rows, out("retention: runs pruned per second (Store.Prune, with their events)", fmt.Sprintf("%.0f/s", pruned),
		fmt.Sprintf("%.0f/s (DELETE of 50 runs past it per statement, events by cascade)", floor)))
	return rows, nil
}

// pruneRates times Store.Prune of scalePruned runs past RETENTION, then the same number deleted
// by plain statements of 50, in runs per second.
func (b *bench) pruneRates(ctx context.Context, r *rig, size int) (pruned, floor float64, err error) {
	n := b.n(scalePruned)
	old := fill{prefix: "o", first: size*10 + 1, n: n, status: "completed", age: 200 * 24 * time.Hour, span: time.Hour, inConv: 100}
	if err := bulk(ctx, r.db, time.Now(), old); err != nil {
		return 0, 0, err
	}
	start := time.Now()
	got, err := r.store.Prune(ctx, db.PruneRequest{Retention: db.DefaultRetention})
	if err != nil {
		return 0, 0, err
	}
	if got.Runs != int64(n) {
		return 0, 0, fmt.Errorf("prune deleted %d runs, want %d", got.Runs, n)
	}
	pruned = float64(n) / time.Since(start).Seconds()
	old.prefix = "q"
	if err := bulk(ctx, r.db, time.Now(), old); err != nil {
		return 0, 0, err
	}
	cut := time.Now().Add(-db.DefaultRetention.Finished)
	start = time.Now()
	for {
		deleted, err := deleteOld(ctx, r.db, cut)
		if err != nil {
			return 0, 0, err
		}
		if deleted == 0 {
			break
		}
	}
	floor = float64(n) / time.Since(start).Seconds()
	return pruned, floor, vacuum(ctx, r.db)
}

// sample times f n times, after scaleWarmup calls it does not time. Why: PostgreSQL plans a
// prepared statement afresh for each of a connection's first five runs of it (custom plans) and
// reuses one plan afterwards, so without them the first size's figures measured the bench's first
// seconds (twelve-branch planning of /workflow status: 12.9 ms at 1,000 runs, 4.3 ms at 100,000)
// rather than the history's size. What a cold connection costs is in BENCHMARKS.md.
func sample(n int, f func() error) ([]time.Duration, error) {
	for range scaleWarmup {
		if err := f(); err != nil {
			return nil, err
		}
	}
	out := make([]time.Duration, 0, n)
	for range n {
		start := time.Now()
		if err := f(); err != nil {
			return nil, err
		}
		out = append(out, time.Since(start))
	}
	return out, nil
}

// runBot runs the real binary with args on d.
func runBot(ctx context.Context, bin string, d *database, args ...string) error {
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + d.home, "THREADFLOW_HOME=" + d.home, "LOG_LEVEL=error",
		"WORKFLOWS_DIR=" + filepath.Join(d.home, "workflows")}
	if d.url != "" {
		cmd.Env = append(cmd.Env, "DATABASE_URL="+d.url)
	}
	cmd.Dir = d.home
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("bot %v: %w\n%s", args, err, out)
	}
	return nil
}

func kb(n int64) string { return fmt.Sprintf("%.0f KB", float64(n)/1000) }
