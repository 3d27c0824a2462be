package main

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"threadflow/orchestrator/execution"
	"time"
)

// chainLength is the number of nodes of the overhead scenario's chain.
const chainLength = 100

// overheadRepeats is how many chains are timed; the median is reported.
const overheadRepeats = 5

const overheadTarget = 2 * time.Millisecond

// chainWorkflow is a chain of n `true` shell nodes, each depending on the one before.
func chainWorkflow(name string, n int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "name: %s\nnodes:\n", name)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "  - id: n%d\n    bash: \"true\"\n", i)
		if i > 1 {
			fmt.Fprintf(&b, "    depends_on: [n%d]\n", i-1)
		}
	}
	return b.String()
}

// overhead times a queued 100-node chain from creation to completion, one run at a time, and
// subtracts 100 bare `sh -c true` timed just before or just after (the faster): what is left is
// threadflow's cost per node (claim, events, lease, status edits). The median of overheadRepeats
// chains is reported.
func (b *bench) overhead(ctx context.Context, d *database) ([]row, error) {
	r, err := newRig(ctx, d, map[string]string{"bench-chain": chainWorkflow("bench-chain", chainLength)})
	if err != nil {
		return nil, err
	}
	defer r.close()
	r.start()
	var per, bare []time.Duration
	for i := range b.n(overheadRepeats) {
		before, err := bareShell(ctx, chainLength)
		if err != nil {
			return nil, err
		}
		start := time.Now()
		if _, err := r.queue(ctx, "bench-chain", 1); err != nil {
			return nil, err
		}
		r.engine.Workers.Wake()
		if err := r.notes.wait(ctx, execution.NoticeCompleted, i+1, 5*time.Minute); err != nil {
			return nil, err
		}
		total := time.Since(start)
		after, err := bareShell(ctx, chainLength)
		if err != nil {
			return nil, err
		}
		// The faster of the two floors: a busy moment of the shared machine must not be
		// subtracted from the chain as if it were process cost.
		floor := min(before, after)
		per = append(per, (total-floor)/chainLength)
		bare = append(bare, floor/chainLength)
		b.logf("chain %d: %s total, %s of it bare processes", i+1, total.Round(time.Millisecond), floor.Round(time.Millisecond))
	}
	slices.Sort(per)
	slices.Sort(bare)
	p, f := per[len(per)/2], bare[len(bare)/2]
	return []row{{scenario: "overhead", engine: d.engine,
		metric: fmt.Sprintf("per node of a %d-node `true` chain (median of %d)", chainLength, len(per)),
		figure: ms(p), floor: ms(f) + " (one bare `sh -c true`)", target: "< " + ms(overheadTarget), met: check(p < overheadTarget),
		command: reproduce("overhead", d.engine)}}, nil
}
