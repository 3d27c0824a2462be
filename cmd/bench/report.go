package main

import (
	"fmt"
	"io"
	"os"
	"runtime"
	"slices"
	"strings"
	"time"
)

// row is one figure of the table.
type row struct {
	scenario string
	engine   string
	metric   string
	figure   string
	floor    string // the same work without threadflow, measured in the same run
	target   string
	met      verdict
	command  string // reproduces the figure
}

// verdict is whether a figure meets its target.
type verdict int

const (
	noTarget verdict = iota
	met
	missed
)

func (v verdict) String() string {
	switch v {
	case met:
		return "met"
	case missed:
		return "**missed**"
	}
	return "-"
}

func check(ok bool) verdict {
	if ok {
		return met
	}
	return missed
}

func reproduce(scenario, engine string) string {
	return fmt.Sprintf("`go run ./cmd/bench -engine %s -scenario %s`", engine, scenario)
}

// writeReport prints the machine, the date, the load and the table as Markdown. The machine is
// shared, so the load average at the start and the end says how much the figures were disturbed.
func writeReport(w io.Writer, host, loadAtStart string, rows []row) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Machine: %s  \nDate: %s  \nLoad average (1, 5, 15 min) at start: %s; at end: %s  \n\n",
		host, time.Now().UTC().Format("2006-01-02 15:04 MST"), loadAtStart, loadAverage())
	b.WriteString("| scenario | engine | metric | figure | floor (same run) | target | verdict | reproduce |\n")
	b.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n",
			r.scenario, r.engine, r.metric, r.figure, r.floor, r.target, r.met, r.command)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// machine describes the host: CPU model and count, memory, OS and Go version.
func machine() string {
	model := "unknown CPU"
	if info, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, line := range strings.Split(string(info), "\n") {
			if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	mem := ""
	if info, err := os.ReadFile("/proc/meminfo"); err == nil {
		if line, _, ok := strings.Cut(string(info), "\n"); ok {
			mem = ", " + strings.Join(strings.Fields(line)[1:], " ") + " RAM"
		}
	}
	return fmt.Sprintf("%s, %d cores%s, %s/%s, %s", model, runtime.NumCPU(), mem, runtime.GOOS, runtime.GOARCH, runtime.Version())
}

// percentile returns the p-th percentile (0 < p <= 100) of ds by the nearest-rank method.
func percentile(ds []time.Duration, p float64) time.Duration {
	if len(ds) == 0 {
		return 0
	}
	s := slices.Clone(ds)
	slices.Sort(s)
	rank := int(float64(len(s))*p/100+0.999999) - 1
	return s[min(max(rank, 0), len(s)-1)]
}

// ms formats a duration in milliseconds.
func ms(d time.Duration) string { return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond)) }

// loadAverage is the first three fields of /proc/loadavg.
func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	return strings.Join(f[:min(3, len(f))], " ")
}
