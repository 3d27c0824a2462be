package main

import (
	"io"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"threadflow/testkit"
)

// millis returns durations of the given milliseconds.
func millis(ns ...int) []time.Duration {
	out := make([]time.Duration, len(ns))
	for i, n := range ns {
		out[i] = time.Duration(n) * time.Millisecond
	}
	return out
}

func TestPercentile(t *testing.T) {
	tests := []struct {
		name string
		in   []time.Duration
		p    float64
		want time.Duration
	}{
		{"empty", nil, 99, 0},
		{"one", millis(7), 50, 7 * time.Millisecond},
		{"median of unsorted", millis(5, 1, 3), 50, 3 * time.Millisecond},
		{"p99 of 100 is the 99th", millis(seq(100)...), 99, 99 * time.Millisecond},
		{"p99 of 10 is the largest", millis(seq(10)...), 99, 10 * time.Millisecond},
		{"p100", millis(2, 9, 4), 100, 9 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := percentile(tt.in, tt.p); got != tt.want {
				t.Errorf("percentile(%v, %v) = %v, want %v", tt.in, tt.p, got, tt.want)
			}
		})
	}
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

func TestParseOptionsRejects(t *testing.T) {
	tests := []struct {
		args []string
		want string
	}{
		{[]string{"-engine", "mysql"}, `-engine "mysql"`},
		{[]string{"-scenario", "dispatch,latency"}, `-scenario "latency"`},
		{[]string{"-scale", "0"}, "-scale 0"},
	}
	for _, tt := range tests {
		_, err := parseOptions(tt.args, io.Discard)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("parseOptions(%q) = %v, want an error naming %s", tt.args, err, tt.want)
		}
	}
}

func TestParseOptionsDefaults(t *testing.T) {
	o, err := parseOptions(nil, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(o.engines, ",") != "sqlite,postgres" || strings.Join(o.scenarios, ",") != strings.Join(allScenarios, ",") || o.scale != 1 {
		t.Errorf("defaults = %+v, want both engines, every scenario, scale 1", o)
	}
}

func TestWriteReportShowsEveryFigureWithTargetAndCommand(t *testing.T) {
	rows := []row{
		{scenario: "overhead", engine: "sqlite", metric: "per node", figure: "0.50 ms", floor: "1.20 ms", target: "< 2.00 ms", met: met,
			command: reproduce("overhead", "sqlite")},
		{scenario: "dispatch", engine: "postgres", metric: "p99", figure: "9.00 ms", floor: "1.00 ms", target: "p99 < 3× floor", met: missed,
			command: reproduce("dispatch", "postgres")},
	}
	var b strings.Builder
	if err := writeReport(&b, "test machine", "0.1 0.2 0.3", rows); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"Machine: test machine", "at start: 0.1 0.2 0.3",
		"| overhead | sqlite | per node | 0.50 ms | 1.20 ms | < 2.00 ms | met | `go run ./cmd/bench -engine sqlite -scenario overhead` |",
		"| dispatch | postgres | p99 | 9.00 ms | 1.00 ms | p99 < 3× floor | **missed** |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q:\n%s", want, out)
		}
	}
}

// TestCLIScenarioRunsTheBinary runs the cli scenario's measurement on short chains with the real
// binary on both engines and checks it prints start-up and per-node rows beside their floors, and
// on PostgreSQL the row against a process and a commit, the commit timed beside the chain. It
// asserts no timing: the figures are the bench's output, not a test's.
func TestCLIScenarioRunsTheBinary(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the bot binary")
	}
	for _, c := range []struct {
		engine  string
		lengths []int
		want    []string
	}{
		{"sqlite", []int{1, 3}, []string{"| cli | sqlite | start-up: `bot workflow run` of a 1-node", "| cli | sqlite | per node, 3-node chain", "× floor", "(one bare `sh -c true`)"}},
		{"postgres", []int{1, 100}, []string{"| cli | postgres | per node, 100-node chain: (run", "| cli | postgres | per node, 100-node chain, against a process and a commit",
			"+ one durable one-row commit, "}},
	} {
		t.Run(c.engine, func(t *testing.T) {
			if c.engine == "postgres" && os.Getenv("TEST_DATABASE_URL") == "" {
				testkit.Missing(t, "PostgreSQL (TEST_DATABASE_URL)")
			}
			b := &bench{opts: options{scale: 1, pgURL: defaultPostgresURL()}, progress: io.Discard}
			t.Cleanup(b.close)
			bin, err := b.bot(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			d, err := b.newDatabase(t.Context(), c.engine)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = d.drop() })
			times, commits, err := b.cliTimes(t.Context(), bin, d, c.lengths, 1)
			if err != nil {
				t.Fatal(err)
			}
			rows := cliRows(d.engine, times)
			if (commits != nil) != (c.engine == "postgres") {
				t.Fatalf("commits timed = %v on %s; want them on PostgreSQL only", commits != nil, c.engine)
			}
			if commits != nil {
				if times[1].commit <= 0 {
					t.Fatalf("no commit timed beside the 100-node chain: %+v", times)
				}
				rows = append(rows, commitRow(times, commits.how))
			}
			var out strings.Builder
			if err := writeReport(&out, "test machine", "0 0 0", rows); err != nil {
				t.Fatal(err)
			}
			for _, want := range c.want {
				if !strings.Contains(out.String(), want) {
					t.Errorf("report lacks %q:\n%s", want, out.String())
				}
			}
		})
	}
}

func TestPeerRowsCompareMedians(t *testing.T) {
	// Archon: 400 ms start-up and 3 ms per node; Threadflow: 20 ms and 1 ms.
	theirs := map[int][]time.Duration{1: millis(400, 390, 900), 100: millis(697, 697, 697), 300: millis(1297, 1297, 1297)}
	ours := map[int][]time.Duration{1: millis(20, 20, 21), 100: millis(119, 119, 119), 300: millis(319, 319, 319)}
	rows := peerRows("sqlite", theirs, ours)
	want := []string{"20.00 ms (Archon 400.00 ms: 20.0× lower)", "1.00 ms (Archon 3.00 ms: 3.0× lower)", "1.00 ms (Archon 3.00 ms: 3.0× lower)"}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d", len(rows), len(want))
	}
	for i, r := range rows {
		if r.figure != want[i] {
			t.Errorf("row %d figure = %q, want %q", i, r.figure, want[i])
		}
	}
	if rows[0].met != met || rows[1].met != missed {
		t.Errorf("verdicts = %v, %v; want met (20×), missed (3×)", rows[0].met, rows[1].met)
	}
}

func TestPeerNeedsArchon(t *testing.T) {
	if _, err := parseOptions([]string{"-scenario", "peer"}, io.Discard); err != nil {
		t.Fatalf("peer is a scenario: %v", err)
	}
	o, _ := parseOptions(nil, io.Discard)
	if contains(o.scenarios, "peer") {
		t.Error("all includes peer, which needs an Archon checkout")
	}
}

// Every scenario -scenario accepts has something to run, and every one that runs is named there.
func TestEveryScenarioRuns(t *testing.T) {
	named := append(slices.Clone(allScenarios), optionalScenarios...)
	for _, s := range named {
		if scenarios[s] == nil {
			t.Errorf("scenario %q runs nothing", s)
		}
	}
	if len(scenarios) != len(named) {
		t.Errorf("%d scenarios run, %d are named", len(scenarios), len(named))
	}
}

// The dispatch targets are ratios to the floor of the same run: p99 at 50 conversations, p50 at 500.
func TestDispatchRowJudgesAgainstThreeTimesTheFloor(t *testing.T) {
	tests := []struct {
		name          string
		conversations int
		lat, floor    []time.Duration
		want          verdict
		figure        string
	}{
		{"one conversation has no target", 1, millis(9, 9), millis(1, 1), noTarget, "9.00 ms / 9.00 ms (9.00× / 9.00× floor)"},
		{"50: p99 under 3x floor", 50, millis(1, 5), millis(1, 2), met, "1.00 ms / 5.00 ms (1.00× / 2.50× floor)"},
		{"50: p99 at 3x floor misses", 50, millis(1, 6), millis(1, 2), missed, "1.00 ms / 6.00 ms (1.00× / 3.00× floor)"},
		{"500: p50 judged, not p99", 500, millis(20, 20, 900), millis(10, 10, 10), met, "20.00 ms / 900.00 ms (2.00× / 90.00× floor)"},
		{"500: p50 over 3x floor misses", 500, millis(40, 40, 40), millis(10, 10, 10), missed, "40.00 ms / 40.00 ms (4.00× / 4.00× floor)"},
		{"no floor measured never meets", 50, millis(1, 1), nil, missed, "1.00 ms / 1.00 ms (+Inf× / +Inf× floor)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := dispatchRow("sqlite", tc.conversations, tc.lat, tc.floor)
			if r.met != tc.want || r.figure != tc.figure {
				t.Fatalf("verdict %v, figure %q; want %v, %q", r.met, r.figure, tc.want, tc.figure)
			}
		})
	}
}

// TestScaleScenarioRuns builds small histories (a hundredth of the scale scenario's) on both
// engines and checks every figure is printed at every size beside its floor; Store.Prune must
// delete exactly the runs past retention (pruneRates checks). It asserts no timing.
func TestScaleScenarioRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the bot binary")
	}
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			b := &bench{opts: options{scale: 0.01, pgURL: defaultPostgresURL()}, progress: io.Discard}
			t.Cleanup(b.close)
			if engine == "postgres" && os.Getenv("TEST_DATABASE_URL") == "" {
				testkit.Missing(t, "PostgreSQL (TEST_DATABASE_URL)")
			}
			rows, err := b.scenario(t.Context(), "scale", engine)
			if err != nil {
				t.Fatal(err)
			}
			var out strings.Builder
			if err := writeReport(&out, "test machine", "0 0 0", rows); err != nil {
				t.Fatal(err)
			}
			for _, size := range []string{"10", "100", "1000"} {
				for _, metric := range []string{"dashboard runs page", "/workflow status", "`bot workflow runs --json", "database size per 1,000 runs",
					"retention: runs pruned per second"} {
					if !strings.Contains(out.String(), "| scale | "+engine+" | "+metric) || !strings.Contains(out.String(), " at "+size+" finished runs |") {
						t.Errorf("report lacks %s at %s finished runs:\n%s", metric, size, out.String())
					}
				}
			}
		})
	}
}

// The PostgreSQL row of the cli scenario judges a node against a process and a commit.
func TestCommitRowAddsTheCommitToTheFloor(t *testing.T) {
	times := []cliTimes{{length: 1, run: 40 * time.Millisecond, floor: time.Millisecond},
		{length: 100, run: 337 * time.Millisecond, floor: 100 * time.Millisecond, commit: 2 * time.Millisecond}}
	r := commitRow(times, "pgbench -c1")
	if r.figure != "3.00 ms (1.00× floor)" || r.met != met || !strings.Contains(r.floor, "3.00 ms (one bare `sh -c true`, 1.00 ms, + one durable one-row commit, 2.00 ms, pgbench -c1)") {
		t.Errorf("commitRow = %+v", r)
	}
}

// Flatness judges how much worse a figure got as the history grew, against the smallest history:
// a figure that improves with size is flat, one that doubles at any size is not; prune is judged
// by its time per 1,000 runs, so a slower prune is worse.
func TestScaleFlatRowsJudgeGrowthOverTheSmallestHistory(t *testing.T) {
	pts := []scalePoint{
		{size: 1000, page: time.Millisecond, status: 2 * time.Millisecond, runs: 20 * time.Millisecond, perThousand: 1400_000, pruned: 5000},
		{size: 10000, page: 2100 * time.Microsecond, status: time.Millisecond, runs: 20 * time.Millisecond, perThousand: 1400_000, pruned: 9000},
		{size: 100000, page: time.Millisecond, status: time.Millisecond, runs: 29 * time.Millisecond, perThousand: 1500_000, pruned: 3000},
	}
	rows := scaleFlatRows("sqlite", pts)
	want := []struct {
		metric, figure string
		met            verdict
	}{
		{"dashboard runs page p50 from 1000 to 100000 finished runs", "2.10× (1.00 ms, worst 2.10 ms)", missed},
		{"/workflow status p50", "1.00× (2.00 ms, worst 2.00 ms)", met},
		{"`bot workflow runs --json` p50", "1.45× (20.00 ms, worst 29.00 ms)", met},
		{"database size per 1,000 runs", "1.07× (1400 KB, worst 1500 KB)", met},
		{"time to prune 1,000 runs", "1.67× (200 ms, worst 333 ms)", missed},
	}
	if len(rows) != len(want) {
		t.Fatalf("%d rows, want %d: %+v", len(rows), len(want), rows)
	}
	for i, w := range want {
		if r := rows[i]; !strings.HasPrefix(r.metric, w.metric) || r.figure != w.figure || r.met != w.met || r.target != "≤ 1.5×" {
			t.Errorf("row %d = %q %q %v %q; want %q %q %v", i, r.metric, r.figure, r.met, r.target, w.metric, w.figure, w.met)
		}
	}
	if rows := scaleFlatRows("sqlite", pts[:1]); rows != nil {
		t.Errorf("one size judged flat: %+v", rows)
	}
}
