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
	scaleSamples = 100 // timed requests per figure; p50 and p99 of them
	scaleWarmup  = 6   // untimed requests before them (sample)
	scaleCLI     = 5   // `bot workflow runs --json` processes per size
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
	var points []scalePoint
	built := 0
	for _, size := range scaleSizes {
		size = b.n(size)
		if err := bulk(ctx, d, now, fill{prefix: "f", first: built + 1, n: size - built, status: "completed", age: 24 * time.Hour,
			span: 80 * 24 * time.Hour, inConv: 100}); err != nil {
			return nil, err
		}
		built = size
		b.logf("%d finished runs, %d paused", size, b.n(scalePaused))
		got, pt, err := b.scaleRows(ctx, r, srv.Handler(), bin, size, base)
		if err != nil {
			return nil, err
		}
		rows, points = append(rows, got...), append(points, pt)
	}
	return append(rows, scaleFlatRows(d.engine, points)...), nil
}

// Issue 34's acceptance: every figure within scaleFloorRatio of its floor, and flat (its largest
// p50 within scaleFlatRatio of its smallest) from the smallest history to the largest.
const (
	scaleFloorRatio = 2.0
	scaleFlatRatio  = 1.5
)

// scalePoint is one size's figures that must stay flat (scaleFlatRows).
type scalePoint struct {
	size               int
	page, status, runs time.Duration
	perThousand        int64   // database bytes per 1,000 runs
	pruned             float64 // runs pruned per second
}

// scaleRows measures one size. Each figure and its floor are timed taking turns (rounds), so both
// live through the same seconds of a machine whose speed drifts by a third within minutes.
func (b *bench) scaleRows(ctx context.Context, r *rig, h http.Handler, bin string, size int, base int64) ([]row, scalePoint, error) {
	d, st := r.db, r.store
	pt := scalePoint{size: size}
	at := fmt.Sprintf(" at %d finished runs", size)
	out := func(metric, figure, floor string, ratio float64) row {
		return row{scenario: "scale", engine: d.engine, metric: metric + at, figure: fmt.Sprintf("%s (%.2f× floor)", figure, ratio), floor: floor,
			target: fmt.Sprintf("< %.1f× floor", scaleFloorRatio), met: check(ratio < scaleFloorRatio), command: reproduce("scale", d.engine)}
	}
	var rows []row

	t, err := rounds(scaleSamples, func() error {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequestWithContext(ctx, http.MethodGet, "/", nil))
		if rec.Code != http.StatusOK {
			return fmt.Errorf("GET / = %d: %s", rec.Code, rec.Body)
		}
		return nil
	},
		func() error { _, err := st.ListRuns(ctx, db.RunFilter{Limit: 51, WithoutSource: true}); return err },
		func() error { _, err := st.CountRuns(ctx, db.RunFilter{Limit: 1000}); return err },
		func() error { _, err := st.CountRuns(ctx, db.RunFilter{}); return err })
	if err != nil {
		return nil, pt, err
	}
	page, list, counts, exact := t[0], t[1], t[2], t[3]
	pt.page = percentile(page, 50)
	floor := percentile(list, 50) + percentile(counts, 50)
	rows = append(rows, out("dashboard runs page (list of 50 + counts per state), p50 / p99",
		ms(pt.page)+" / "+ms(percentile(page, 99)),
		ms(percentile(list, 50))+" (the list's query) + "+ms(percentile(counts, 50))+" (the counts' query, up to 1,000 per state; an exact GROUP BY: "+
			ms(percentile(exact, 50))+")", ratio(pt.page, floor)))

	msg := conversation.Message{Address: conversation.Address{Platform: benchPlatform, ChannelID: "C1"}, UserID: benchPlatform + ":u1", Text: "/workflow status"}
	t, err = rounds(scaleSamples, func() error { r.engine.Dispatcher.Handle(ctx, msg); return nil }, func() error {
		_, err := st.ListRuns(ctx, db.RunFilter{InConversation: statusConversation, Statuses: []db.Status{db.StatusQueued, db.StatusRunning, db.StatusPaused}, Limit: 50})
		return err
	})
	if err != nil {
		return nil, pt, err
	}
	pt.status = percentile(t[0], 50)
	rows = append(rows, out(fmt.Sprintf("/workflow status of a conversation with %d paused runs (50 listed), p50", b.n(scalePaused)/5),
		ms(pt.status), ms(percentile(t[1], 50))+" (its 50 active runs' query)", ratio(pt.status, percentile(t[1], 50))))

	t, err = rounds(b.n(scaleCLI), func() error { return runBot(ctx, bin, d, "workflow", "runs", "--json", "--limit", "20") },
		func() error { return runBot(ctx, bin, d, "workflow", "list", "--json") })
	if err != nil {
		return nil, pt, err
	}
	twenty, err := rounds(scaleSamples, func() error { _, err := st.ListRuns(ctx, db.RunFilter{Limit: 20, WithoutSource: true}); return err })
	if err != nil {
		return nil, pt, err
	}
	pt.runs = percentile(t[0], 50)
	startup, query := percentile(t[1], 50), percentile(twenty[0], 50)
	rows = append(rows, out("`bot workflow runs --json --limit 20`, real binary, p50", ms(pt.runs),
		ms(startup)+" (`bot workflow list --json`: start-up, no run read) + "+ms(query)+" (the query)", ratio(pt.runs, startup+query)))

	size2, err := dbSize(ctx, d)
	if err != nil {
		return nil, pt, err
	}
	total := size + b.n(scalePaused)
	pt.perThousand = (size2 - base) * 1000 / int64(total)
	rows = append(rows, row{scenario: "scale", engine: d.engine, metric: "database size per 1,000 runs (4 events each)" + at, figure: kb(pt.perThousand),
		floor: "-", command: reproduce("scale", d.engine)})

	pruned, pruneFloor, err := b.pruneRates(ctx, r, size)
	if err != nil {
		return nil, pt, err
	}
	pt.pruned = pruned
	rows = append(rows, out("retention: runs pruned per second (Store.Prune, with their events)", fmt.Sprintf("%.0f/s", pruned),
		fmt.Sprintf("%.0f/s (DELETE of 50 runs past it per statement, events by cascade)", pruneFloor), pruneFloor/pruned))
	return rows, pt, nil
}

// scaleFlatRows says for each figure how much worse it got as the history grew: its worst at any
// size over its figure at the smallest (for prune throughput, the smallest's rate over the
// slowest). A figure that improves with size is flat: it does not grow with history.
func scaleFlatRows(engine string, pts []scalePoint) []row {
	if len(pts) < 2 {
		return nil
	}
	sizes := fmt.Sprintf(" from %d to %d finished runs", pts[0].size, pts[len(pts)-1].size)
	dur := func(v float64) string { return ms(time.Duration(v)) }
	var rows []row
	for _, m := range []struct {
		metric string
		cost   func(scalePoint) float64 // higher is worse
		unit   func(float64) string
	}{
		{"dashboard runs page p50", func(p scalePoint) float64 { return float64(p.page) }, dur},
		{"/workflow status p50", func(p scalePoint) float64 { return float64(p.status) }, dur},
		{"`bot workflow runs --json` p50", func(p scalePoint) float64 { return float64(p.runs) }, dur},
		{"database size per 1,000 runs", func(p scalePoint) float64 { return float64(p.perThousand) }, func(v float64) string { return kb(int64(v)) }},
		{"time to prune 1,000 runs", func(p scalePoint) float64 { return 1000 / p.pruned }, func(v float64) string { return fmt.Sprintf("%.0f ms", v*1000) }},
	} {
		first, worst := m.cost(pts[0]), m.cost(pts[0])
		for _, p := range pts[1:] {
			worst = max(worst, m.cost(p))
		}
		r := worst / max(first, 1e-12)
		rows = append(rows, row{scenario: "scale", engine: engine, metric: m.metric + sizes + ": worst over the smallest history's",
			figure: fmt.Sprintf("%.2f× (%s, worst %s)", r, m.unit(first), m.unit(worst)), floor: "-",
			target: fmt.Sprintf("≤ %.1f×", scaleFlatRatio), met: check(r <= scaleFlatRatio), command: reproduce("scale", engine)})
	}
	return rows
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

// rounds times each of fs n times, taking turns (fs[0], fs[1], ..., fs[0], ...), after
// scaleWarmup untimed turns; out[i] are fs[i]'s times. The turns keep a figure and its floor in
// the same seconds of a machine whose speed drifts. The untimed turns: PostgreSQL plans a prepared
// statement afresh for each of a connection's first five runs of it (custom plans) and reuses one
// plan afterwards, so without them the first size's figures measured the bench's first seconds
// (twelve-branch planning of /workflow status: 12.9 ms at 1,000 runs, 4.3 ms at 100,000) rather
// than the history's size. What a cold connection costs is in BENCHMARKS.md.
func rounds(n int, fs ...func() error) ([][]time.Duration, error) {
	for range scaleWarmup {
		for _, f := range fs {
			if err := f(); err != nil {
				return nil, err
			}
		}
	}
	out := make([][]time.Duration, len(fs))
	for range n {
		for i, f := range fs {
			start := time.Now()
			if err := f(); err != nil {
				return nil, err
			}
			out[i] = append(out[i], time.Since(start))
		}
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
