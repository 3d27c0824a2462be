package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"time"
)

// outputBytes is how much the loud node prints.
const outputBytes = 1 << 30

// outputTarget is how much more peak memory the loud run may cost than the quiet one.
const outputTarget = 32 << 20

// outputWorkflows print outputBytes (loud) or nothing (quiet) and hand the output to a second node,
// which reads the inline $print.output and the full output file. %d is the size.
const outputWorkflows = `name: bench-%s
nodes:
  - id: print
    bash: %s
  - id: after
    depends_on: [print]
    bash: |
      printf '%%s' "$print.output" | wc -c
      wc -c < "$TF_OUTPUT_PRINT_FILE"
`

// output runs the real binary (`bot workflow run`) on a workflow whose node prints 1 GB, and on the
// same workflow printing nothing, and compares the peak resident memory of the two processes:
// ru_maxrss from wait4, the largest of the bot and the node processes it waited for (the node's
// yes and head are small, so it is the bot's).
func (b *bench) output(ctx context.Context, d *database) ([]row, error) {
	bin, err := b.bot(ctx)
	if err != nil {
		return nil, err
	}
	size := b.n(outputBytes)
	dir := filepath.Join(d.home, "workflows")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	for name, script := range map[string]string{
		"loud":  fmt.Sprintf("yes 'threadflow bench output line' | head -c %d", size),
		"quiet": "\"true\"",
	} {
		src := fmt.Sprintf(outputWorkflows, name, script)
		if err := os.WriteFile(filepath.Join(dir, name+".yaml"), []byte(src), 0o644); err != nil {
			return nil, err
		}
	}
	quiet, _, err := peakRSS(ctx, bin, d, dir, "bench-quiet")
	if err != nil {
		return nil, err
	}
	loud, took, err := peakRSS(ctx, bin, d, dir, "bench-loud")
	if err != nil {
		return nil, err
	}
	grown := loud - quiet
	b.logf("peak RSS: %.1f MB quiet, %.1f MB printing %d bytes (%s)", mb(quiet), mb(loud), size, took.Round(time.Millisecond))
	return []row{{scenario: "output", engine: d.engine,
		metric: fmt.Sprintf("peak RSS of `bot workflow run` whose node prints %s, minus a node printing nothing (real binary, wait4 ru_maxrss)", humanSize(size)),
		figure: fmt.Sprintf("%+.1f MB (%.1f MB peak, run took %s)", mb(grown), mb(loud), took.Round(time.Millisecond)),
		floor:  fmt.Sprintf("%.1f MB peak printing nothing", mb(quiet)),
		target: fmt.Sprintf("< %.0f MB more", mb(outputTarget)), met: check(grown < outputTarget),
		command: reproduce("output", d.engine)}}, nil
}

// peakRSS runs `bot workflow run NAME` to completion and returns its peak resident memory in bytes.
func peakRSS(ctx context.Context, bin string, d *database, dir, name string) (int64, time.Duration, error) {
	ps, took, err := runWorkflowCommand(ctx, bin, d, dir, name)
	if err != nil {
		return 0, 0, err
	}
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return 0, 0, fmt.Errorf("no resource usage for %s on this system", name)
	}
	return ru.Maxrss << 10, took, nil // Linux reports kilobytes
}

func humanSize(n int) string {
	if n >= 1<<30 && n%(1<<30) == 0 {
		return fmt.Sprintf("%d GiB", n>>30)
	}
	return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
}
