package execution

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync/atomic"
	"syscall"
	"time"

	"threadflow/db"
)

// stderrTail is how much of a failed command's standard error reaches the run's last error.
const stderrTail = 2048

// nodeError is a failure classified where it happened.
type nodeError struct {
	class db.ErrorClass
	msg   string
	hint  string // what a person can do about it, for recovery pauses
}

func (e *nodeError) Error() string { return e.msg }

// runShell runs script with `sh -c` in dir, in its own process group so that cancelling the context
// kills the whole tree (a script's children included) at once. Values reach the script only through
// env; the script text never contains user input. The script's standard output goes straight to
// stdout, a file: the bot never holds it, however large it grows.
func runShell(ctx context.Context, dir, script string, env []string, stdout *os.File) error {
	if _, err := os.Stat(dir); err != nil {
		return &nodeError{class: db.ClassInfra, msg: fmt.Sprintf("working directory %s is gone", dir),
			hint: "restore the directory, or abandon the run and start it again"}
	}
	sh, err := shellPath()
	if err != nil {
		return startError(err)
	}
	cmd := exec.Command(sh, "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = stdout, &limitedTail{buf: &stderr, max: stderrTail}
	// Pdeathsig: if the bot itself dies (kill -9, OOM), sh dies with it instead of running on while
	// another replica re-runs the node.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	// Pdeathsig fires when the thread that started the child exits, not only the process: keep this
	// goroutine on its thread until the child is gone (golang/go#27505).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := cmd.Start(); err != nil {
		return startError(err)
	}
	// Wait here, on the locked thread, and let cancellation kill the process group from the
	// context's own goroutine: waiting in a second goroutine cost a hand-off to this locked thread
	// after every node. The whole group dies, not only sh: a script's children must not outlive
	// the run.
	stop := context.AfterFunc(ctx, func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	err = cmd.Wait()
	if !stop() {
		return ctx.Err()
	}
	return shellResult(stderr.String(), err)
}

// shellPath finds sh on the bot's PATH and remembers it once found: exec.Command would search PATH
// again for every node, a stat of each directory before sh's. It is the search exec.Command makes
// (the bot's own PATH, not the node's environment), so the result is the same. A failed search is
// not remembered: installing sh mends the next node without a restart.
func shellPath() (string, error) {
	if p, ok := foundShell.Load().(string); ok {
		return p, nil
	}
	p, err := exec.LookPath("sh")
	if err == nil {
		foundShell.Store(p)
	}
	return p, err
}

var foundShell atomic.Value // string: sh's path, once found

// startError explains a script that could not start. The orchestrator keeps the environment under
// envOutputBudget, so "argument list too long" means the bot's own environment is too large.
func startError(err error) error {
	if errors.Is(err, syscall.E2BIG) {
		return &nodeError{class: db.ClassInfra, msg: "cannot start sh: its environment is too large (" + err.Error() + ")",
			hint: "remove large variables from the bot's environment"}
	}
	return &nodeError{class: db.ClassInfra, msg: "cannot start sh: " + err.Error(), hint: "make sure sh is installed"}
}

func shellResult(errOut string, err error) error {
	if err == nil {
		return nil
	}
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		msg := fmt.Sprintf("exit status %d", exit.ExitCode())
		if t := bytes.TrimSpace([]byte(errOut)); len(t) > 0 {
			msg += ": " + string(t)
		}
		return &nodeError{class: db.ClassPermanent, msg: msg}
	}
	return &nodeError{class: db.ClassPermanent, msg: err.Error()}
}

// limitedTail keeps the last max bytes written to it.
type limitedTail struct {
	buf *bytes.Buffer
	max int
}

func (l *limitedTail) Write(p []byte) (int, error) {
	l.buf.Write(p)
	if over := l.buf.Len() - l.max; over > 0 {
		l.buf.Next(over)
	}
	return len(p), nil
}

// withTimeout bounds ctx by d when d is set, and says so in the error: a timeout is transient.
func withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeoutCause(ctx, d, errNodeTimeout)
}

var errNodeTimeout = errors.New("node timed out")
