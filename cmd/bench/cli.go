package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"time"
)

// cliLengths are the chain lengths the cli scenario runs: 1 times start-up, the others are the
// curve of per-node cost against length, which should be flat.
var cliLengths = []int{1, 10, 100, 300, 1000}

// cliRepeats is how many times each length is run (alternating with its floor); medians are shown.
const cliRepeats = 5

// Chains of up to shortChain nodes are run shortChainRounds times as often as longer ones. Their
// per-node figure is the difference of two whole runs made mostly of start-up, divided by a few
// nodes, so one slow start-up moves it by half the floor; the extra runs cost a second or two.
const (
	shortChain       = 10
	shortChainRounds = 3
)

// cliStartupTarget bounds `bot workflow run` of a 1-node workflow as a whole process.
const cliStartupTarget = 60 * time.Millisecond

// cliPerNodeRatio bounds a node's cost on the command path against one bare `sh -c true`.
const cliPerNodeRatio = 1.5

// cliTimes are the medians measured for one chain length.
type cliTimes struct {
	length int
	run    time.Duration // `bot workflow run` of the chain, whole process
	floor  time.Duration // length × `sh -c true`, sequential, timed beside it
	commit time.Duration // one durable one-row commit, timed beside it (PostgreSQL, commitChain only)
}

// commitChain is the chain length whose per-node cost PostgreSQL's row sets against a process plus
// a commit (issue 34's acceptance); the commits are timed beside its runs only.
const commitChain = 100

// cli runs what users run: the real binary's `bot workflow run` on chains of `true` shell nodes,
// each length alternating with its floor (as many bare `sh -c true`) so both see the same minute
// of the shared machine. The per-node cost of a chain is its time beyond the 1-node run, divided
// by the nodes beyond the first: start-up is paid once and shown on its own row.
func (b *bench) cli(ctx context.Context, d *database) ([]row, error) {
	bin, err := b.bot(ctx)
	if err != nil {
		return nil, err
	}
	times, commits, err := b.cliTimes(ctx, bin, d, cliLengths, b.n(cliRepeats))
	if err != nil {
		return nil, err
	}
	rows := cliRows(d.engine, times)
	if commits == nil {
		return rows, nil
	}
	return append(rows, commitRow(times, commits.how)), nil
}

// commitRow sets a node's cost in the commitChain-node chain beside its floor on PostgreSQL: one bare
// `sh -c true` plus one durable one-row commit, both timed beside the chain's runs (how says what
// timed the commit).
func commitRow(times []cliTimes, how string) row {
	var one, chain cliTimes
	for _, t := range times {
		switch t.length {
		case 1:
			one = t
		case commitChain:
			chain = t
		}
	}
	per := (chain.run - one.run) / (commitChain - 1)
	commit := chain.commit
	floor := chain.floor/commitChain + commit
	ratio := float64(per) / float64(floor)
	return row{scenario: "cli", engine: "postgres", metric: fmt.Sprintf("per node, %d-node chain, against a process and a commit (real binary, medians)", commitChain),
		figure: fmt.Sprintf("%s (%.2f× floor)", ms(per), ratio),
		floor:  fmt.Sprintf("%s (one bare `sh -c true`, %s, + one durable one-row commit, %s, %s)", ms(floor), ms(chain.floor/commitChain), ms(commit), how),
		target: fmt.Sprintf("< %.1f× floor", cliPerNodeRatio), met: check(ratio < cliPerNodeRatio), command: reproduce("cli", "postgres")}
}

// cliTimes runs every length repeats times (short chains shortChainRounds times as often), A (the
// bot) B (the floor) A B, and returns medians. On PostgreSQL the commitChain's floor has a second
// part, as many one-row commits as the chain has nodes (commits says how they were timed; nil on
// SQLite).
func (b *bench) cliTimes(ctx context.Context, bin string, d *database, lengths []int, repeats int) ([]cliTimes, *commitBench, error) {
	var commits *commitBench
	if d.engine == "postgres" {
		var err error
		if commits, err = newCommitBench(ctx, d); err != nil {
			return nil, nil, err
		}
	}
	dirs := map[int]string{}
	for _, n := range lengths {
		// One workflows directory per length: start-up reads every workflow file it finds, and
		// a 1,000-node file would be part of every shorter run's start-up.
		dir := filepath.Join(d.home, fmt.Sprintf("workflows-%d", n))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, "chain.yaml"), []byte(chainWorkflow(cliChain(n), n)), 0o644); err != nil {
			return nil, nil, err
		}
		dirs[n] = dir
		if _, err := cliRun(ctx, bin, d, dir, cliChain(n)); err != nil { // warm-up: page cache, migrations
			return nil, nil, err
		}
	}
	runs, floors, commitTimes := map[int][]time.Duration{}, map[int][]time.Duration{}, map[int][]time.Duration{}
	for i := range repeats * shortChainRounds {
		for _, n := range lengths {
			if n > shortChain && i%shortChainRounds != 0 {
				continue
			}
			took, err := cliRun(ctx, bin, d, dirs[n], cliChain(n))
			if err != nil {
				return nil, nil, err
			}
			floor, err := bareShell(ctx, n)
			if err != nil {
				return nil, nil, err
			}
			runs[n], floors[n] = append(runs[n], took), append(floors[n], floor)
			b.logf("round %d, %d nodes: bot workflow run %s, %d × sh -c true %s", i+1, n, took.Round(time.Millisecond), n, floor.Round(time.Millisecond))
			if commits == nil || n != commitChain {
				continue
			}
			commit, err := commits.latency(ctx, n)
			if err != nil {
				return nil, nil, err
			}
			commitTimes[n] = append(commitTimes[n], commit)
			b.logf("round %d, %d nodes: %d one-row commits, %s each", i+1, n, n, commit.Round(time.Microsecond))
		}
	}
	out := make([]cliTimes, 0, len(lengths))
	for _, n := range lengths {
		out = append(out, cliTimes{length: n, run: median(runs[n]), floor: median(floors[n]), commit: median(commitTimes[n])})
	}
	return out, commits, nil
}

func cliChain(n int) string { return fmt.Sprintf("bench-chain-%d", n) }

// cliRun runs `bot workflow run NAME` to completion as a user would, and times the whole process.
func cliRun(ctx context.Context, bin string, d *database, dir, name string) (time.Duration, error) {
	_, took, err := runWorkflowCommand(ctx, bin, d, dir, name)
	return took, err
}

// runWorkflowCommand runs `bot workflow run NAME` of the real binary to completion on d, with the
// workflows of dir, and returns the finished process and how long it took: what every real-binary
// scenario measures.
func runWorkflowCommand(ctx context.Context, bin string, d *database, dir, name string) (*os.ProcessState, time.Duration, error) {
	cmd := exec.CommandContext(ctx, bin, "workflow", "run", name)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + d.home, "THREADFLOW_HOME=" + d.home, "WORKFLOWS_DIR=" + dir, "LOG_LEVEL=error"}
	if d.url != "" {
		cmd.Env = append(cmd.Env, "DATABASE_URL="+d.url)
	}
	var out bytes.Buffer
	cmd.Dir, cmd.Stdout, cmd.Stderr = d.home, &out, &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return nil, 0, fmt.Errorf("bot workflow run %s: %w\n%s", name, err, out.String())
	}
	return cmd.ProcessState, time.Since(start), nil
}

// cliRows turns the medians into the table: start-up (the 1-node run), then per node for every
// longer chain beside one bare `sh -c true`, with the ratio.
func cliRows(engine string, times []cliTimes) []row {
	var rows []row
	var one *cliTimes
	for i := range times {
		if times[i].length == 1 {
			one = &times[i]
		}
	}
	if one == nil {
		return nil
	}
	rows = append(rows, row{scenario: "cli", engine: engine,
		metric: "start-up: `bot workflow run` of a 1-node `true` chain, whole process (real binary, median)",
		figure: ms(one.run), floor: ms(one.floor) + " (one bare `sh -c true`)",
		target: "< " + ms(cliStartupTarget), met: check(one.run < cliStartupTarget), command: reproduce("cli", engine)})
	for _, t := range times {
		if t.length == 1 {
			continue
		}
		per := (t.run - one.run) / time.Duration(t.length-1)
		floor := t.floor / time.Duration(t.length)
		ratio := float64(per) / float64(floor)
		rows = append(rows, row{scenario: "cli", engine: engine,
			metric: fmt.Sprintf("per node, %d-node chain: (run − 1-node run) / %d (real binary, medians)", t.length, t.length-1),
			figure: fmt.Sprintf("%s (%.2f× floor)", ms(per), ratio), floor: ms(floor) + " (one bare `sh -c true`)",
			target: fmt.Sprintf("< %.1f× floor", cliPerNodeRatio), met: check(ratio < cliPerNodeRatio), command: reproduce("cli", engine)})
	}
	return rows
}

// median of durations; zero for none.
func median(ds []time.Duration) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}
