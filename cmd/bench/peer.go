package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// peerLengths are the chains both CLIs run: 1 is start-up plus one node, the others per node.
var peerLengths = []int{1, 100, 300}

// peerRepeats is how many counted runs each CLI gets per length, after one warm-up each.
const peerRepeats = 5

// peerTarget is how many times cheaper than Archon Threadflow should be, on start-up and per node.
const peerTarget = 10.0

// peer runs Archon's CLI (`bun packages/cli/src/cli.ts workflow run NAME --no-worktree`, from a
// checkout given by -archon with its dependencies installed) and the real `bot workflow run` on the
// same shell-only chains, alternately (A B A B), and prints the medians and their ratio: start-up
// with one node, and per node (time beyond the 1-node run, divided by the nodes beyond the first).
func (b *bench) peer(ctx context.Context, d *database) ([]row, error) {
	if b.opts.archon == "" {
		return nil, errors.New("the peer scenario needs -archon DIR, a checkout of github.com/coleam00/Archon with `bun install` done (BENCHMARKS.md, Peers)")
	}
	bin, err := b.bot(ctx)
	if err != nil {
		return nil, err
	}
	ws, err := archonWorkspace(ctx, d.home)
	if err != nil {
		return nil, err
	}
	archonHome := filepath.Join(d.home, "archon-home")
	if err := os.MkdirAll(archonHome, 0o755); err != nil {
		return nil, err
	}
	archon := func(n int) (time.Duration, error) {
		return b.archonRun(ctx, ws, archonHome, cliChain(n))
	}
	dirs := map[int]string{}
	for _, n := range peerLengths {
		dir := filepath.Join(d.home, fmt.Sprintf("workflows-%d", n))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		// Archon requires a description; the same file, description included, goes to both.
		src := []byte(strings.Replace(chainWorkflow(cliChain(n), n), "\nnodes:", fmt.Sprintf("\ndescription: %d sequential true nodes\nnodes:", n), 1))
		if err := os.WriteFile(filepath.Join(dir, "chain.yaml"), src, 0o644); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(ws, ".archon", "workflows", cliChain(n)+".yaml"), src, 0o644); err != nil {
			return nil, err
		}
		dirs[n] = dir
		if _, err := archon(n); err != nil { // warm-up of each
			return nil, err
		}
		if _, err := cliRun(ctx, bin, d, dir, cliChain(n)); err != nil {
			return nil, err
		}
	}
	peerTimes, ourTimes := map[int][]time.Duration{}, map[int][]time.Duration{}
	for i := range b.n(peerRepeats) {
		for _, n := range peerLengths {
			a, err := archon(n)
			if err != nil {
				return nil, err
			}
			t, err := cliRun(ctx, bin, d, dirs[n], cliChain(n))
			if err != nil {
				return nil, err
			}
			peerTimes[n], ourTimes[n] = append(peerTimes[n], a), append(ourTimes[n], t)
			b.logf("round %d, %d nodes: Archon %s, Threadflow %s", i+1, n, a.Round(time.Millisecond), t.Round(time.Millisecond))
		}
	}
	return peerRows(d.engine, peerTimes, ourTimes), nil
}

// peerRows compares medians: start-up (the 1-node run) and per node of every longer chain.
func peerRows(engine string, peerTimes, ourTimes map[int][]time.Duration) []row {
	theirs1, ours1 := median(peerTimes[1]), median(ourTimes[1])
	one := func(metric string, theirs, ours time.Duration) row {
		ratio := float64(theirs) / float64(ours)
		return row{scenario: "peer", engine: engine, metric: metric,
			figure: fmt.Sprintf("%s (Archon %s: %.1f× lower)", ms(ours), ms(theirs), ratio), floor: "-",
			target: fmt.Sprintf(">= %.0f× lower", peerTarget), met: check(ratio >= peerTarget), command: "`go run ./cmd/bench -scenario peer -archon DIR`"}
	}
	rows := []row{one("start-up: `workflow run` of a 1-node `true` chain, whole process, Threadflow beside Archon (medians, alternating)", theirs1, ours1)}
	for _, n := range peerLengths[1:] {
		perTheirs := (median(peerTimes[n]) - theirs1) / time.Duration(n-1)
		perOurs := (median(ourTimes[n]) - ours1) / time.Duration(n-1)
		rows = append(rows, one(fmt.Sprintf("per node, %d-node chain: (run − 1-node run) / %d, Threadflow beside Archon (medians, alternating)", n, n-1), perTheirs, perOurs))
	}
	return rows
}

// archonWorkspace is a git repository with an .archon/workflows folder: Archon runs workflows of
// the repository it is started in.
func archonWorkspace(ctx context.Context, home string) (string, error) {
	ws := filepath.Join(home, "archon-ws")
	if err := os.MkdirAll(filepath.Join(ws, ".archon", "workflows"), 0o755); err != nil {
		return "", err
	}
	for _, args := range [][]string{{"init", "-q"}, {"-c", "user.email=bench@example.com", "-c", "user.name=bench", "commit", "-q", "--allow-empty", "-m", "bench"}} {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = ws
		if out, err := cmd.CombinedOutput(); err != nil {
			return "", fmt.Errorf("git %v in the Archon workspace: %w\n%s", args, err, out)
		}
	}
	return ws, nil
}

// archonRun runs Archon's CLI on one workflow to completion and times the whole process. Its HOME
// is the bench's, so its database starts empty and nothing of the user's is read.
func (b *bench) archonRun(ctx context.Context, ws, home, name string) (time.Duration, error) {
	cmd := exec.CommandContext(ctx, b.opts.bun, filepath.Join(b.opts.archon, "packages", "cli", "src", "cli.ts"), "workflow", "run", name, "--no-worktree")
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
	var out bytes.Buffer
	cmd.Dir, cmd.Stdout, cmd.Stderr = ws, &out, &out
	start := time.Now()
	if err := cmd.Run(); err != nil {
		return 0, fmt.Errorf("archon workflow run %s: %w\n%s", name, err, out.String())
	}
	return time.Since(start), nil
}
