package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"

	"threadflow/adapters/web"
	"threadflow/conversation"
	"threadflow/db"
)

// The scale scenario's history: finished runs at each size, beside scalePaused paused ones (a
// fifth of them in statusConversation), and scalePruned runs past RETENTION pruned at each size.
var scaleSizes = []int{1_000, 10_000, 100_000}

const (
	scalePaused      = 10_000
	scalePruned      = 1_000
	scalePruneRounds = 3   // prunes per size, taking turns over the sizes; their median
	scaleSamples     = 100 // timed requests per figure; p50 and p99 of them
	scaleWarmup      = 6   // untimed requests before them (sample)
	scaleCLI         = 5   // `bot workflow runs --json` processes per size
)

// scale builds histories of 1,000, 10,000 and 100,000 finished runs, each beside 10,000 paused
// ones, in a database of their own (bulk SQL at run time), and times what grows with history if
// anything does: the dashboard's runs page, /workflow status of a conversation with 2,000 paused
// runs, `bot workflow runs --json`, the database's size per 1,000 runs and retention's
// throughput. Each figure stands beside its floor, the single indexed query it rests on. The
// sizes and the floors are timed in turns (rounds): on a machine whose speed drifts by a third
// within minutes, sizes timed one after another compared minutes, not histories.
func (b *bench) scale(ctx context.Context, d *database) (rows []row, err error) {
	bin, err := b.bot(ctx)
	if err != nil {
		return nil, err
	}
	var hs []*history
	defer func() {
		for _, h := range hs {
			h.close()
			if h.d != d { // the scenario drops its own
				if dropErr := h.d.drop(); err == nil && dropErr != nil {
					err = fmt.Errorf("drop a scale database: %w", dropErr)
				}
			}
		}
	}()
	for i, size := range scaleSizes {
		hd := d
		if i > 0 {
			if hd, err = b.newDatabase(ctx, d.engine); err != nil {
				return nil, err
			}
		}
		h, err := b.newHistory(ctx, hd, b.n(size))
		if h != nil {
			hs = append(hs, h)
		}
		if err != nil {
			if h == nil && hd != d { // not in hs: dropped here
				err = errors.Join(err, hd.drop())
			}
			return nil, err
		}
	}
	rows, points, err := b.scaleFigures(ctx, hs, bin)
	if err != nil {
		return nil, err
	}
	return append(rows, scaleFlatRows(d.engine, points)...), nil
}

// history is one size's database with its store, engine and dashboard.
type history struct {
	size int
	d    *database
	r    *rig
	srv  *web.Server
	base int64 // the empty database's size: what its size per run leaves out
}

// newHistory fills d with size finished runs beside the paused ones. A history returned with an
// error is to be closed.
func (b *bench) newHistory(ctx context.Context, d *database, size int) (*history, error) {
	r, err := newRig(ctx, d, map[string]string{"bench-three": chainWorkflow("bench-three", 3)})
	if err != nil {
		return nil, err
	}
	h := &history{size: size, d: d, r: r}
	if h.base, err = dbSize(ctx, d); err != nil {
		return h, err
	}
	now := time.Now()
	if err := bulk(ctx, d, now, fill{prefix: "p", first: 1, n: b.n(scalePaused), status: "paused", age: time.Hour, span: 30 * 24 * time.Hour, inConv: 5}); err != nil {
		return h, err
	}
	if err := bulk(ctx, d, now, fill{prefix: "f", first: 1, n: size, status: "completed", age: 24 * time.Hour, span: 80 * 24 * time.Hour, inConv: 100}); err != nil {
		return h, err
	}
	if h.srv, err = web.New(web.Config{Store: r.store, Log: r.log, Retention: db.DefaultRetention}); err != nil {
		return h, err
	}
	b.logf("%d finished runs, %d paused", size, b.n(scalePaused))
	return h, nil
}

func (h *history) close() {
	if h.srv != nil {
		h.srv.Close()
	}
	h.r.close()
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

// scaleFigures times every size's figures and floors in rounds, and returns the rows size by size.
func (b *bench) scaleFigures(ctx context.Context, hs []*history, bin string) ([]row, []scalePoint, error) {
	var page, status, cli, twenty []func() error
	for _, h := range hs {
		page = append(page, h.page(ctx), h.list(ctx, db.RunFilter{Limit: 51, WithoutSource: true}), h.count(ctx, db.RunFilter{Limit: 1000}), h.count(ctx, db.RunFilter{}))
		status = append(status, h.status(ctx), h.list(ctx, db.RunFilter{InConversation: statusConversation,
			Statuses: []db.Status{db.StatusQueued, db.StatusRunning, db.StatusPaused}, Limit: 50}))
		cli = append(cli, func() error { return runBot(ctx, bin, h.d, "workflow", "runs", "--json", "--limit", "20") },
			func() error { return runBot(ctx, bin, h.d, "workflow", "list", "--json") })
		twenty = append(twenty, h.list(ctx, db.RunFilter{Limit: 20, WithoutSource: true}))
	}
	pageT, err := rounds(scaleSamples, page...)
	if err != nil {
		return nil, nil, err
	}
	statusT, err := rounds(scaleSamples, status...)
	if err != nil {
		return nil, nil, err
	}
	cliT, err := rounds(b.n(scaleCLI), cli...)
	if err != nil {
		return nil, nil, err
	}
	twentyT, err := rounds(scaleSamples, twenty...)
	if err != nil {
		return nil, nil, err
	}
	pruned, pruneFloor, err := b.pruneRates(ctx, hs)
	if err != nil {
		return nil, nil, err
	}
	var rows []row
	var pts []scalePoint
	for i, h := range hs {
		got, pt, err := b.historyRows(ctx, h, pageT[4*i:4*i+4], statusT[2*i:2*i+2], cliT[2*i:2*i+2], twentyT[i], pruned[i], pruneFloor[i])
		if err != nil {
			return nil, nil, err
		}
		rows, pts = append(rows, got...), append(pts, pt)
	}
	return rows, pts, nil
}

// historyRows turns one size's times into its rows, with its database's size.
func (b *bench) historyRows(ctx context.Context, h *history, pageT, statusT, cliT [][]time.Duration, twenty []time.Duration, pruned, pruneFloorRates []float64) ([]row, scalePoint, error) {
	engine := h.d.engine
	pt := scalePoint{size: h.size}
	at := fmt.Sprintf(" at %d finished runs", h.size)
	out := func(metric, figure, floor string, ratio float64) row {
		return row{scenario: "scale", engine: engine, metric: metric + at, figure: fmt.Sprintf("%s (%.2f× floor)", figure, ratio), floor: floor,
			target: fmt.Sprintf("< %.1f× floor", scaleFloorRatio), met: check(ratio < scaleFloorRatio), command: reproduce("scale", engine)}
	}
	var rows []row

	page, list, counts, exact := pageT[0], pageT[1], pageT[2], pageT[3]
	pt.page = percentile(page, 50)
	rows = append(rows, out("dashboard runs page (list of 50 + counts per state), p50 / p99",
		ms(pt.page)+" / "+ms(percentile(page, 99)),
		ms(percentile(list, 50))+" (the list's query) + "+ms(percentile(counts, 50))+" (the counts' query, up to 1,000 per state; an exact GROUP BY: "+
			ms(percentile(exact, 50))+")", ratio(pt.page, percentile(list, 50)+percentile(counts, 50))))

	pt.status = percentile(statusT[0], 50)
	active := percentile(statusT[1], 50)
	rows = append(rows, out(fmt.Sprintf("/workflow status of a conversation with %d paused runs (50 listed), p50", b.n(scalePaused)/5),
		ms(pt.status), ms(active)+" (its 50 active runs' query)", ratio(pt.status, active)))

	pt.runs = percentile(cliT[0], 50)
	startup, query := percentile(cliT[1], 50), percentile(twenty, 50)
	rows = append(rows, out("`bot workflow runs --json --limit 20`, real binary, p50", ms(pt.runs),
		ms(startup)+" (`bot workflow list --json`: start-up, no run read) + "+ms(query)+" (the query)", ratio(pt.runs, startup+query)))

	size, err := dbSize(ctx, h.d)
	if err != nil {
		return nil, pt, err
	}
	pt.perThousand = (size - h.base) * 1000 / int64(h.size+b.n(scalePaused))
	rows = append(rows, row{scenario: "scale", engine: engine, metric: "database size per 1,000 runs (4 events each)" + at, figure: kb(pt.perThousand),
		floor: "-", command: reproduce("scale", engine)})

	pt.pruned = medianRate(pruned)
	pruneFloor := medianRate(pruneFloorRates)
	rows = append(rows, out(fmt.Sprintf("retention: runs pruned per second (Store.Prune, with their events), median of %d", scalePruneRounds),
		fmt.Sprintf("%.0f/s", pt.pruned), fmt.Sprintf("%.0f/s (DELETE of 50 runs past it per statement, events by cascade)", pruneFloor), pruneFloor/pt.pruned))
	return rows, pt, nil
}

// page is a GET of the dashboard's runs page.
func (h *history) page(ctx context.Context) func() error {
	handler := h.srv.Handler()
	return func() error {
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, httptest.NewRequestWithContext(ctx, http.MethodGet, "/", nil))
		if rec.Code != http.StatusOK {
			return fmt.Errorf("GET / = %d: %s", rec.Code, rec.Body)
		}
		return nil
	}
}

// status is /workflow status typed in the conversation with the paused runs.
func (h *history) status(ctx context.Context) func() error {
	msg := conversation.Message{Address: conversation.Address{Platform: benchPlatform, ChannelID: "C1"}, UserID: benchPlatform + ":u1", Text: "/workflow status"}
	return func() error { h.r.engine.Dispatcher.Handle(ctx, msg); return nil }
}

// list and count are the floors: one query each.
func (h *history) list(ctx context.Context, f db.RunFilter) func() error {
	return func() error { _, err := h.r.store.ListRuns(ctx, f); return err }
}

func (h *history) count(ctx context.Context, f db.RunFilter) func() error {
	return func() error { _, err := h.r.store.CountRuns(ctx, f); return err }
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

// pruneRates times, for each history, Store.Prune of scalePruned runs past RETENTION, then the
// same number deleted by plain statements of 50 on one connection, in runs per second: the medians
// of scalePruneRounds turns over the histories (a prune of 1,000 runs takes a tenth of a second, in
// which the machine's mood moved one measurement by half).
func (b *bench) pruneRates(ctx context.Context, hs []*history) (pruned, floor [][]float64, err error) {
	n := b.n(scalePruned)
	pruned, floor = make([][]float64, len(hs)), make([][]float64, len(hs))
	for k := range scalePruneRounds {
		for i, h := range hs {
			old := fill{prefix: "o", first: h.size*10 + 2*k*n + 1, n: n, status: "completed", age: 200 * 24 * time.Hour, span: time.Hour, inConv: 100}
			if err := bulk(ctx, h.d, time.Now(), old); err != nil {
				return nil, nil, err
			}
			start := time.Now()
			got, err := h.r.store.Prune(ctx, db.PruneRequest{Retention: db.DefaultRetention})
			if err != nil {
				return nil, nil, err
			}
			if got.Runs != int64(n) {
				return nil, nil, fmt.Errorf("prune deleted %d runs, want %d", got.Runs, n)
			}
			pruned[i] = append(pruned[i], float64(n)/time.Since(start).Seconds())
			old.first += n
			if err := bulk(ctx, h.d, time.Now(), old); err != nil {
				return nil, nil, err
			}
			start = time.Now()
			if deleted, err := deleteOld(ctx, h.d, time.Now().Add(-db.DefaultRetention.Finished)); err != nil || deleted != int64(n) {
				return nil, nil, fmt.Errorf("the floor deleted %d runs, want %d: %v", deleted, n, err)
			}
			floor[i] = append(floor[i], float64(n)/time.Since(start).Seconds())
			if err := vacuum(ctx, h.d); err != nil {
				return nil, nil, err
			}
		}
	}
	return pruned, floor, nil
}

// medianRate is the median of rates.
func medianRate(rates []float64) float64 {
	s := slices.Clone(rates)
	slices.Sort(s)
	return s[len(s)/2]
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
