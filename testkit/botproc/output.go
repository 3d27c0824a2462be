package botproc

import (
	"bytes"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"threadflow/testkit"
)

// outputLog collects a process's output and hands complete lines to waitLine.
type outputLog struct {
	mu      sync.Mutex
	all     bytes.Buffer
	changed chan struct{} // closed and replaced on every write
}

func newOutputLog() *outputLog { return &outputLog{changed: make(chan struct{})} }

func (o *outputLog) Write(b []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.all.Write(b)
	close(o.changed)
	o.changed = make(chan struct{})
	return len(b), nil
}

// snapshot returns the output so far and a channel closed on the next write.
func (o *outputLog) snapshot() (string, <-chan struct{}) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.all.String(), o.changed
}

func (o *outputLog) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.all.String()
}

func (o *outputLog) tail(n int) string {
	all := lines(o.String())
	return strings.Join(all[max(0, len(all)-n):], "\n")
}

// lines are the lines of text, the last one also when it is not complete yet.
func lines(text string) []string { return strings.Split(strings.TrimRight(text, "\n"), "\n") }

// waitLine waits for a complete line matching re and returns its submatches. It fails the test at
// once with stderr when the process exits first.
func (o *outputLog) waitLine(t testing.TB, re *regexp.Regexp, exited <-chan struct{}, stderr *outputLog) []string {
	t.Helper()
	deadline := time.NewTimer(testkit.Deadline)
	defer deadline.Stop()
	for {
		text, changed := o.snapshot()
		if m := matchLine(text, re); m != nil {
			return m
		}
		select {
		case <-changed:
		case <-exited:
			if m := matchLine(o.String(), re); m != nil { // written just before it exited
				return m
			}
			t.Fatalf("botproc: bot exited before printing a line matching %s; stdout:\n%s\nstderr:\n%s", re, text, stderr.tail(dumpLines))
		case <-deadline.C:
			t.Fatalf("botproc: no line matching %s within %v; stdout:\n%s\nstderr:\n%s", re, testkit.Deadline, text, stderr.tail(dumpLines))
		}
	}
}

// matchLine returns the submatches of the first complete line of text matching re.
func matchLine(text string, re *regexp.Regexp) []string {
	for _, line := range strings.SplitAfter(text, "\n") {
		if !strings.HasSuffix(line, "\n") {
			return nil
		}
		if m := re.FindStringSubmatch(strings.TrimSuffix(line, "\n")); m != nil {
			return m
		}
	}
	return nil
}
