package agent

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"
	"syscall"
	"time"
)

const (
	// stderrCap is how much of the CLI's stderr is kept: enough for its last error, bounded however
	// chatty the CLI is.
	stderrCap = 4 << 10
	// maxLine bounds one stdout event. A longer line is dropped rather than buffered without limit.
	maxLine = 16 << 20
	// waitDelay bounds how long Wait keeps reading pipes after the CLI exits or is killed, in case a
	// process outside its group still holds them.
	waitDelay = 5 * time.Second
)

// process is one CLI invocation: the prompt goes to stdin, each stdout line goes to onLine, and the
// tail of stderr is kept for error messages.
type process struct {
	bin    string
	args   []string
	dir    string
	env    []string
	stdin  string
	onLine func([]byte)
}

// exit is how a process ended.
type exit struct {
	err    error  // from start or wait; nil when the CLI exited 0
	stderr string // at most stderrCap bytes, the end of stderr
}

// run starts the process in its own process group and waits for it. Cancelling ctx kills the whole
// group: the CLI and any tool it spawned. Stragglers left in the group after a normal exit are killed
// too, so no agent process outlives its turn.
func (p process) run(ctx context.Context) exit {
	cmd := exec.CommandContext(ctx, p.bin, p.args...)
	cmd.Dir = p.dir
	cmd.Env = p.env // complete: see childenv
	cmd.Stdin = strings.NewReader(p.stdin)
	lines := &lineWriter{onLine: p.onLine}
	cmd.Stdout = lines
	tail := &tailBuffer{max: stderrCap}
	cmd.Stderr = tail
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
	cmd.WaitDelay = waitDelay

	err := cmd.Run()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // what it left in its group; gone already is fine
	}
	lines.flush()
	return exit{err: err, stderr: strings.ToValidUTF8(tail.String(), "?")}
}

// killGroup sends SIGKILL to the process group led by pid. A group that is already gone is not an
// error.
func killGroup(pid int) error {
	err := syscall.Kill(-pid, syscall.SIGKILL)
	if errors.Is(err, syscall.ESRCH) {
		return nil
	}
	return err
}

// lineWriter splits a stream into lines without the trailing newline. It is written to by one
// goroutine at a time (os/exec's copier), and read after the process has been waited for.
type lineWriter struct {
	onLine   func([]byte)
	buf      []byte
	overflow bool // the current line exceeded maxLine and is being dropped
}

func (w *lineWriter) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.add(p)
			break
		}
		w.add(p[:i])
		w.flush()
		p = p[i+1:]
	}
	return n, nil
}

func (w *lineWriter) add(p []byte) {
	if w.overflow {
		return
	}
	if len(w.buf)+len(p) > maxLine {
		w.overflow, w.buf = true, w.buf[:0]
		return
	}
	w.buf = append(w.buf, p...)
}

// flush ends the current line. onLine must not keep the slice.
func (w *lineWriter) flush() {
	if !w.overflow && len(bytes.TrimSpace(w.buf)) > 0 {
		w.onLine(w.buf)
	}
	w.buf, w.overflow = w.buf[:0], false
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max int
	buf []byte
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	n := len(p)
	if len(p) >= t.max {
		t.buf = append(t.buf[:0], p[len(p)-t.max:]...)
		return n, nil
	}
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		copy(t.buf, t.buf[over:])
		t.buf = t.buf[:t.max]
	}
	return n, nil
}

func (t *tailBuffer) String() string { return string(t.buf) }
