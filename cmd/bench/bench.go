package main

import (
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// bench holds what scenarios share: the options and the bot binary built once.
type bench struct {
	opts     options
	progress io.Writer
	binDir   string
}

// scenario runs one scenario on a fresh database of engine and drops the database afterwards.
func (b *bench) scenario(ctx context.Context, name, engine string) (rows []row, err error) {
	d, err := b.newDatabase(ctx, engine)
	if err != nil {
		return nil, err
	}
	defer func() {
		if dropErr := d.drop(); err == nil && dropErr != nil {
			err = fmt.Errorf("drop the bench database: %w", dropErr)
		}
	}()
	return scenarios[name](b, ctx, d)
}

// scenarios are the scenarios by name; allScenarios and optionalScenarios say which run when.
var scenarios = map[string]func(*bench, context.Context, *database) ([]row, error){
	"cli":        (*bench).cli,
	"dispatch":   (*bench).dispatch,
	"memory":     (*bench).memory,
	"output":     (*bench).output,
	"overhead":   (*bench).overhead,
	"peer":       (*bench).peer,
	"recovery":   (*bench).recovery,
	"scale":      (*bench).scale,
	"throughput": (*bench).throughput,
	"transcript": (*bench).transcript,
}

// n scales a count by -scale, keeping at least one.
func (b *bench) n(count int) int { return max(1, int(math.Round(float64(count)*b.opts.scale))) }

func (b *bench) logf(format string, args ...any) {
	fmt.Fprintf(b.progress, "   "+format+"\n", args...)
}

// bot returns the bot binary: -bot, or ./cmd/bot built once into a temp directory.
func (b *bench) bot(ctx context.Context) (string, error) {
	if b.opts.botBin != "" {
		return b.opts.botBin, nil
	}
	if b.binDir == "" {
		dir, err := os.MkdirTemp("", "threadflow-bench-bin-")
		if err != nil {
			return "", err
		}
		b.binDir = dir
		out, err := exec.CommandContext(ctx, "go", "build", "-o", filepath.Join(dir, "threadflow"), "threadflow/cmd/bot").CombinedOutput()
		if err != nil {
			return "", fmt.Errorf("go build threadflow/cmd/bot (run the bench from the repository, or pass -bot): %w\n%s", err, out)
		}
	}
	return filepath.Join(b.binDir, "threadflow"), nil
}

func (b *bench) close() {
	if b.binDir != "" {
		_ = os.RemoveAll(b.binDir)
	}
}

// bareShell times n sequential `sh -c true`, the floor of a shell node.
func bareShell(ctx context.Context, n int) (time.Duration, error) {
	start := time.Now()
	for range n {
		if err := exec.CommandContext(ctx, "sh", "-c", "true").Run(); err != nil {
			return 0, fmt.Errorf("sh -c true: %w", err)
		}
	}
	return time.Since(start), nil
}
