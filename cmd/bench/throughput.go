package main

import (
	"context"
	"fmt"
	"os/exec"
	"sync"
	"threadflow/orchestrator/execution"
	"time"
)

// throughputRuns is how many runs the throughput scenario completes.
const throughputRuns = 2000

// throughputSlots is the bot's default WORKERS, which the rig keeps.
const throughputSlots = 8

const throughputTarget = 50.0 // runs/s on SQLite

const threeNodeWorkflow = `name: bench-three
nodes:
  - id: build
    bash: "true"
  - id: test
    depends_on: [build]
    bash: "true"
  - id: ship
    depends_on: [test]
    bash: "true"
`

// throughput queues the runs first, then times the workers from start until every run completed.
// The floor is the same 3 processes per run with the same number of runs at once and no threadflow:
// the most the machine allows.
func (b *bench) throughput(ctx context.Context, d *database) ([]row, error) {
	r, err := newRig(ctx, d, map[string]string{"bench-three": threeNodeWorkflow})
	if err != nil {
		return nil, err
	}
	defer r.close()
	runs := b.n(throughputRuns)
	bare, err := bareRuns(ctx, runs, throughputSlots)
	if err != nil {
		return nil, err
	}
	if _, err := r.queue(ctx, "bench-three", runs); err != nil {
		return nil, err
	}
	start := time.Now()
	r.start()
	if err := r.notes.wait(ctx, execution.NoticeCompleted, runs, 30*time.Minute); err != nil {
		return nil, err
	}
	rate := float64(runs) / time.Since(start).Seconds()
	b.logf("%d runs: %.1f runs/s (bare processes %.1f runs/s)", runs, rate, bare)
	rw := row{scenario: "throughput", engine: d.engine, metric: fmt.Sprintf("completed runs/s, %d three-node shell runs, %d workers", runs, throughputSlots),
		figure: fmt.Sprintf("%.1f runs/s", rate), floor: fmt.Sprintf("%.1f runs/s (bare processes, upper bound)", bare), target: "-",
		command: reproduce("throughput", d.engine)}
	if d.engine == "sqlite" {
		rw.target, rw.met = fmt.Sprintf(">= %.0f runs/s", throughputTarget), check(rate >= throughputTarget)
	}
	return []row{rw}, nil
}

// bareRuns executes runs × 3 `sh -c true` with slots runs at once and returns runs per second.
func bareRuns(ctx context.Context, runs, slots int) (float64, error) {
	start := time.Now()
	work := make(chan struct{})
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	for range slots {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range work { // keeps draining after an error, so the sender never blocks
				for range 3 {
					if err := exec.CommandContext(ctx, "sh", "-c", "true").Run(); err != nil {
						once.Do(func() { first = fmt.Errorf("sh -c true: %w", err) })
					}
				}
			}
		}()
	}
	for range runs {
		work <- struct{}{}
	}
	close(work)
	wg.Wait()
	return float64(runs) / time.Since(start).Seconds(), first
}
