package main

import (
	"context"
	"fmt"
	"runtime"
	"runtime/debug"
	"threadflow/orchestrator/execution"
	"time"
)

// pausedRuns is how many runs the memory scenario leaves waiting at a gate.
const pausedRuns = 10000

// memoryWarmup runs reach their gate before the baseline is taken, so pools, caches and code paths
// are warm in both measurements.
const memoryWarmup = 50

const memoryTarget = 20 << 20 // bytes more for 10,000 paused runs

const gateWorkflow = `name: bench-gate
nodes:
  - id: ask
    approval:
      message: "Ship it?"
  - id: ship
    depends_on: [ask]
    bash: "true"
`

// footprint is the live memory of this process after a full collection.
type footprint struct {
	heap, stack uint64 // bytes in use
	goroutines  int
}

func measure() footprint {
	runtime.GC()
	debug.FreeOSMemory() // a second full collection, and returns freed pages
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return footprint{heap: m.HeapInuse, stack: m.StackInuse, goroutines: runtime.NumGoroutine()}
}

// memory measures, in this process (runtime.MemStats after a full GC: heap and stacks in use), the
// engine's memory with no paused run and with pausedRuns runs paused at an approval gate. A paused
// run should be a row in the database and nothing in memory.
func (b *bench) memory(ctx context.Context, d *database) ([]row, error) {
	r, err := newRig(ctx, d, map[string]string{"bench-gate": gateWorkflow})
	if err != nil {
		return nil, err
	}
	defer r.close()
	r.start()
	if err := b.pause(ctx, r, memoryWarmup, memoryWarmup); err != nil {
		return nil, err
	}
	before := measure()
	n := b.n(pausedRuns)
	if err := b.pause(ctx, r, n, memoryWarmup+n); err != nil {
		return nil, err
	}
	after := measure()
	grown := int64(after.heap+after.stack) - int64(before.heap+before.stack)
	b.logf("%d paused: heap+stacks %+.1f MB, goroutines %d -> %d", n, mb(grown), before.goroutines, after.goroutines)
	return []row{{scenario: "memory", engine: d.engine,
		metric: fmt.Sprintf("heap+stacks in use with %d runs paused at a gate, minus none (in-process MemStats after GC)", n),
		figure: fmt.Sprintf("%+.1f MB (goroutines %d -> %d)", mb(grown), before.goroutines, after.goroutines),
		floor:  fmt.Sprintf("%.1f MB with none paused", mb(int64(before.heap+before.stack))),
		target: fmt.Sprintf("< %.0f MB more", mb(memoryTarget)), met: check(grown < memoryTarget),
		command: reproduce("memory", d.engine)}}, nil
}

// pause queues n gated runs and waits until total gate notices were seen.
func (b *bench) pause(ctx context.Context, r *rig, n, total int) error {
	if _, err := r.queue(ctx, "bench-gate", n); err != nil {
		return err
	}
	r.engine.Workers.Wake()
	return r.notes.wait(ctx, execution.NoticeGate, total, 30*time.Minute)
}

func mb(bytes int64) float64 { return float64(bytes) / (1 << 20) }
