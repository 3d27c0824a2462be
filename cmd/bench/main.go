// Command bench measures threadflow on SQLite and on PostgreSQL and prints a Markdown table of the
// figures, each beside its target and a floor measured in the same run, so a figure can be read as
// "how far above what the machine and the database allow" rather than as a bare number.
//
// Scenarios (see BENCHMARKS.md for what each one times and why):
//
//	dispatch    a /workflow run message in -> the first reply out, p50/p99, 1/50/500 conversations
//	overhead    per-node cost of a 100-node chain of `true` shell nodes
//	throughput  completed runs per second of a three-node shell workflow
//	recovery    1,000 runs killed mid-node with SIGKILL: restart -> every one running again
//	memory      heap and goroutines with 10,000 runs paused at gates, against none
//	output      peak RSS of the real binary running a node that prints 1 GB, against one printing nothing
//	peer        (only when named, with -archon) Archon's CLI and `bot workflow run` alternately on the same chains
//	scale       1,000 / 10,000 / 100,000 finished runs beside 10,000 paused: the runs page, /workflow status, runs --json, size, prune
//	cli         the real binary's `bot workflow run`: start-up, and per-node cost of 10-1,000-node chains beside bare `sh -c true`
//
// It creates its own fresh PostgreSQL database (dropped at exit) and temporary SQLite files, and for
// the recovery, output and cli scenarios build and run the real bot binary.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"slices"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "bench:", err)
		}
		os.Exit(1)
	}
}

// options are the command-line flags.
type options struct {
	engines   []string
	scenarios []string
	pgURL     string
	botBin    string
	scale     float64
	cpuProf   string
	archon    string // Archon checkout for the peer scenario
	bun       string // Bun binary that runs Archon
}

// allScenarios is also the order of a full run. cli comes first: its per-node figure is a fraction
// of a millisecond above a bare fork, and on ext4 without a journal every file it creates costs
// more for minutes after many are deleted, as the recovery and output scenarios' homes are when
// they end, and while the output scenario's gigabytes are written back (BENCHMARKS.md, session 7).
var allScenarios = []string{"cli", "dispatch", "overhead", "throughput", "recovery", "memory", "output", "transcript", "scale"}

// optionalScenarios run only when named: peer needs another project's checkout.
var optionalScenarios = []string{"peer"}

func parseOptions(args []string, stderr io.Writer) (options, error) {
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	engine := fs.String("engine", "both", "database engine: sqlite, postgres or both")
	scenario := fs.String("scenario", "all", "comma-separated scenarios ("+strings.Join(allScenarios, ", ")+") or all")
	pg := fs.String("postgres", defaultPostgresURL(), "PostgreSQL server `URL` whose database is used only to create and drop the bench's own")
	bin := fs.String("bot", "", "bot binary for the recovery, output and cli scenarios (empty: go build ./cmd/bot into a temp dir)")
	scale := fs.Float64("scale", 1, "multiplies every run and message count; below 1 for a quick smoke run (figures are then not comparable to the targets)")
	cpu := fs.String("cpuprofile", "", "write a CPU profile of the whole bench to `file` (go tool pprof)")
	archon := fs.String("archon", "", "checkout of github.com/coleam00/Archon with `bun install` done, for the peer scenario (`dir`)")
	bun := fs.String("bun", "bun", "Bun binary that runs Archon's CLI in the peer scenario (`path`)")
	if err := fs.Parse(args); err != nil {
		return options{}, err
	}
	o := options{pgURL: *pg, botBin: *bin, scale: *scale, cpuProf: *cpu, archon: *archon, bun: *bun}
	switch *engine {
	case "both":
		o.engines = []string{"sqlite", "postgres"}
	case "sqlite", "postgres":
		o.engines = []string{*engine}
	default:
		return o, fmt.Errorf("-engine %q: want sqlite, postgres or both", *engine)
	}
	if *scenario == "all" {
		o.scenarios = allScenarios
	} else {
		for _, s := range strings.Split(*scenario, ",") {
			if !contains(allScenarios, s) && !contains(optionalScenarios, s) {
				return o, fmt.Errorf("-scenario %q: want one of %s, or all", s, strings.Join(append(slices.Clone(allScenarios), optionalScenarios...), ", "))
			}
			o.scenarios = append(o.scenarios, s)
		}
	}
	if o.scale <= 0 {
		return o, fmt.Errorf("-scale %v: want a positive factor", o.scale)
	}
	return o, nil
}

func defaultPostgresURL() string {
	if u := os.Getenv("TEST_DATABASE_URL"); u != "" {
		return u
	}
	return "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// run measures every chosen scenario on every chosen engine and prints the table. Progress goes to
// stderr so stdout is the table alone.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	o, err := parseOptions(args, stderr)
	if err != nil {
		return err
	}
	load := loadAverage()
	b := &bench{opts: o, progress: stderr}
	defer b.close()
	if o.cpuProf != "" {
		stop, err := startCPUProfile(o.cpuProf)
		if err != nil {
			return err
		}
		defer stop()
	}
	var rows []row
	for _, sc := range o.scenarios {
		for _, eng := range o.engines {
			fmt.Fprintf(stderr, "== %s on %s\n", sc, eng)
			got, err := b.scenario(ctx, sc, eng)
			if err != nil {
				return fmt.Errorf("%s on %s: %w", sc, eng, err)
			}
			rows = append(rows, got...)
		}
	}
	return writeReport(stdout, machine(), load, rows)
}

// startCPUProfile profiles the bench process (the engine runs in it, except in the recovery
// scenario) until the returned function is called.
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("-cpuprofile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); _ = f.Close() }, nil
}
