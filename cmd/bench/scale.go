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
	scaleWarmup      = 6   // untimed turns before them (rounds)
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
	size        int
	d           *database
	r           *rig
	srv         *web.Server
	perThousand int64 // database bytes per 1,000 runs once filled (the empty schema left out)
}

// newHistory fills d with size finished runs beside the paused ones. A history returned with an
// error is to be closed.
func (b *bench) newHistory(ctx context.Context, d *database, size int) (*history, error) {
	r, err := newRig(ctx, d, map[string]string{"bench-three": chainWorkflow("bench-three", 3)})
	if err != nil {
		return nil, err
	}
	h := &history{size: size, d: d, r: r}
	base, err := dbSize(ctx, d)
	if err != nil {
		return h, err
	}
	now := time.Now()
	if err := bulk(ctx, d, now, fill{prefix: "p", first: 1, n: b.n(scalePaused), status: "paused", age: time.Hour, span: 30 * 24 * time.Hour, inConv: 5}); err != nil {
		return h, err
	}
	if err := bulk(ctx, d, now, fill{prefix: "f", first: 1, n: size, status: "completed", age: 24 * time.Hour, span: 80 * 24 * time.Hour, inConv: 100}); err != nil {
		return h, err
	}
	filled, err := dbSize(ctx, d) // before any prune: deleted rows would leave their pages behind
	if err != nil {
		return h, err
	}
	h.perThousand = (filled - base) * 1000 / int64(size+b.n(scalePaused))
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

// Issue 34's acceptance: every figure within scaleFloorRatio of its floor, and flat: at no size
// more than scaleFlatRatio of its figure at the smallest history (scaleFlatRows).
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

// historyTimes are one size's timed figures and floors (rounds), and its prune rates.
type historyTimes struct {
	page, list, counts, exact []time.Duration // the runs page and its floors
	status, active            []time.Duration // /workflow status and its floor
	runs, startup, twenty     []time.Duration // `bot workflow runs --json` and its floors
	pruned, pruneFloor        []float64       // runs per second, one per turn
}

// scaleFigures times every size's figures and floors in rounds, and returns the rows size by size.
func (b *bench) scaleFigures(ctx context.Context, hs []*history, bin string) ([]row, []scalePoint, error) {
	ts := make([]historyTimes, len(hs))
	// Each round takes every size's figure and floors in turn; slots names where each time goes.
	measure := func(n int, fn func(h *history, t *historyTimes) []timed) error {
		var fs []func() error
		var slots []*[]time.Duration
		for i, h := range hs {
			for _, m := range fn(h, &ts[i]) {
				fs, slots = append(fs, m.f), append(slots, m.into)
			}
		}
		got, err := rounds(n, fs...)
		for i, d := range got {
			*slots[i] = d
		}
		return err
	}
	activeRuns := db.RunFilter{InConversation: statusConversation, Statuses: []db.Status{db.StatusQueued, db.StatusRunning, db.StatusPaused}, Limit: 50}
	if err := measure(scaleSamples, func(h *history, t *historyTimes) []timed {
		return []timed{{h.page(ctx), &t.page}, {h.list(ctx, db.RunFilter{Limit: 51, WithoutSource: true}), &t.list},
			{h.count(ctx, db.RunFilter{Limit: 1000}), &t.counts}, {h.count(ctx, db.RunFilter{}), &t.exact}}
	}); err != nil {
		return nil, nil, err
	}
	if err := measure(scaleSamples, func(h *history, t *historyTimes) []timed {
		return []timed{{h.status(ctx), &t.status}, {h.list(ctx, activeRuns), &t.active}}
	}); err != nil {
		return nil, nil, err
	}
	if err := measure(b.n(scaleCLI), func(h *history, t *historyTimes) []timed {
		return []timed{{func() error { return runBot(ctx, bin, h.d, "workflow", "runs", "--json", "--limit", "20") }, &t.runs},
			{func() error { return runBot(ctx, bin, h.d, "workflow", "list", "--json") }, &t.startup}}
	}); err != nil {
		return nil, nil, err
	}
	if err := measure(scaleSamples, func(h *history, t *historyTimes) []timed {
		return []timed{{h.list(ctx, db.RunFilter{Limit: 20, WithoutSource: true}), &t.twenty}}
	}); err != nil {
		return nil, nil, err
	}
	if err := b.pruneRates(ctx, hs, ts); err != nil {
		return nil, nil, err
	}
	var rows []row
	var pts []scalePoint
	for i, h := range hs {
		got, pt := b.historyRows(h, ts[i])
		rows, pts = append(rows, got...), append(pts, pt)
	}
	return rows, pts, nil
}

// timed is one function rounds times and where its times go.
type timed struct {
	f    func() error
	into *[]time.Duration
}

// historyRows turns one size's times into its rows.
func (b *bench) historyRows(h *history, t historyTimes) ([]row, scalePoint) {
	engine := h.d.engine
	at := fmt.Sprintf(" at %d finished runs", h.size)
	out := func(metric, figure, floor string, ratio float64) row {
		return row{scenario: "scale", engine: engine, metric: metric + at, figure: fmt.Sprintf("%s (%.2f× floor)", figure, ratio), floor: floor,
			target: fmt.Sprintf("< %.1f× floor", scaleFloorRatio), met: check(ratio < scaleFloorRatio), command: reproduce("scale", engine)}
	}
	p50 := func(ds []time.Duration) time.Duration { return percentile(ds, 50) }
	pt := scalePoint{size: h.size, page: p50(t.page), status: p50(t.status), runs: p50(t.runs), perThousand: h.perThousand, pruned: medianRate(t.pruned)}
	pruneFloor := medianRate(t.pruneFloor)
	return []row{
		out("dashboard runs page (list of 50 + counts per state), p50 / p99", ms(pt.page)+" / "+ms(percentile(t.page, 99)),
			ms(p50(t.list))+" (the list's query) + "+ms(p50(t.counts))+" (the counts' query, up to 1,000 per state; an exact GROUP BY: "+ms(p50(t.exact))+")",
			ratio(pt.page, p50(t.list)+p50(t.counts))),
		out(fmt.Sprintf("/workflow status of a conversation with %d paused runs (50 listed), p50", b.n(scalePaused)/5),
			ms(pt.status), ms(p50(t.active))+" (its 50 active runs' query)", ratio(pt.status, p50(t.active))),
		out("`bot workflow runs --json --limit 20`, real binary, p50", ms(pt.runs),
			ms(p50(t.startup))+" (`bot workflow list --json`: start-up, no run read) + "+ms(p50(t.twenty))+" (the query)", ratio(pt.runs, p50(t.startup)+p50(t.twenty))),
		{scenario: "scale", engine: engine, metric: "database size per 1,000 runs (4 events each)" + at, figure: kb(pt.perThousand), floor: "-",
			command: reproduce("scale", engine)},
		out(fmt.Sprintf("retention: runs pruned per second (Store.Prune, with their events), median of %d", scalePruneRounds),
			fmt.Sprintf("%.0f/s", pt.pruned), fmt.Sprintf("%.0f/s (DELETE of 50 runs past it per statement, events by cascade)", pruneFloor), pruneFloor/pt.pruned),
	}, pt
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
// same number deleted by plain statements of 50 on one connection, in runs per second, into ts:
// scalePruneRounds turns over the histories, whose medians are shown (a prune of 1,000 runs takes
// a tenth of a second, in which the machine's mood moved one measurement by half). Each fill
// vacuums (bulk), so each prune and its floor start from the same state.
func (b *bench) pruneRates(ctx context.Context, hs []*history, ts []historyTimes) error {
	n := b.n(scalePruned)
	for k := range scalePruneRounds {
		for i, h := range hs {
			old := fill{prefix: "o", first: h.size*10 + 2*k*n + 1, n: n, status: "completed", age: 200 * 24 * time.Hour, span: time.Hour, inConv: 100}
			if err := bulk(ctx, h.d, time.Now(), old); err != nil {
				return err
			}
			start := time.Now()
			got, err := h.r.store.Prune(ctx, db.PruneRequest{Retention: db.DefaultRetention})
			if err != nil {
				return err
			}
			if got.Runs != int64(n) {
				return fmt.Errorf("prune deleted %d runs, want %d", got.Runs, n)
			}
			ts[i].pruned = append(ts[i].pruned, float64(n)/time.Since(start).Seconds())
			old.first += n
			if err := bulk(ctx, h.d, time.Now(), old); err != nil {
				return err
			}
			start = time.Now()
			if deleted, err := deleteOld(ctx, h.d, time.Now().Add(-db.DefaultRetention.Finished)); err != nil || deleted != int64(n) {
				return fmt.Errorf("the floor deleted %d runs, want %d: %v", deleted, n, err)
			}
			ts[i].pruneFloor = append(ts[i].pruneFloor, float64(n)/time.Since(start).Seconds())
		}
	}
	return nil
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
