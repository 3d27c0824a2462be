package execution

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"threadflow/childenv"
	"threadflow/db"
)

// stderrTail is how much of a failed command's standard error reaches the run's last error.
const stderrTail = 2048

// nodeError is a failure classified where it happened.
type nodeError struct {
	class db.ErrorClass
	msg   string
	hint  string // what a person can do about it, for recovery pauses
	// exited: the script ran and ended with a non-zero exit status (a check that said no).
	exited bool
}

func (e *nodeError) Error() string { return e.msg }

// runShell runs script with `<shell> -c` (sh when shell is "") in dir (runProcess), in its own process group so that cancelling the context
// kills the whole tree (a script's children included) at once. Values reach the script only through
// env; the script text never contains user input. The script's standard output goes straight to
// stdout, a file: the bot never holds it, however large it grows.
//
// With a gate, the shell starts at once and the script runs once the gate opens (startGate); when
// it never does, the process is stopped and the gate's error returned.
func runShell(ctx context.Context, dir, shell, script string, env []string, stdout *outputFile, gate *startGate) error {
	sh, err := shellPath(cmp.Or(shell, "sh"))
	if err != nil {
		return startError(cmp.Or(shell, "sh"), err)
	}
	if gate != nil {
		script = gatedScript(script)
	}
	return runGated(ctx, dir, []string{sh, "-c", script}, env, stdout, gate)
}

// runProcess runs argv in dir as runShell describes: its own process group, killed whole when ctx
// ends, the bot's environment without its secrets plus env, standard output to stdout.
func runProcess(ctx context.Context, dir string, argv []string, env []string, stdout *outputFile) error {
	return runGated(ctx, dir, argv, env, stdout, nil)
}

// runGated is runProcess with, when gate is set, the gate's pipe as the process's descriptor 3 (a
// gatedScript reads it), opened once the process has started.
func runGated(ctx context.Context, dir string, argv []string, env []string, stdout *outputFile, gate *startGate) error {
	if _, err := os.Stat(dir); err != nil {
		return &nodeError{class: db.ClassInfra, msg: fmt.Sprintf("working directory %s is gone", dir),
			hint: "restore the directory, or abandon the run and start it again"}
	}
	stdin, err := devNull()
	if err != nil {
		return startError(programName(argv), err)
	}
	errRead, errWrite, err := blockingPipe()
	if err != nil {
		return startError(programName(argv), err)
	}
	defer errRead.Close()
	cmd := exec.Command(argv[0], argv[1:]...)
	var gateWrite *os.File
	if gate != nil {
		gateRead, w, err := blockingPipe()
		if err != nil {
			_ = errWrite.Close()
			return startError(programName(argv), err)
		}
		defer gateRead.Close() // the child has its copy once started
		gateWrite, cmd.ExtraFiles = w, []*os.File{gateRead}
	}
	cmd.Dir = dir
	cmd.Env = childenv.Environ(env...) // the bot's environment without its secrets
	cmd.Stdin, cmd.Stdout, cmd.Stderr = stdin, stdout.File, errWrite
	// Pdeathsig: if the bot itself dies (kill -9, OOM), sh dies with it instead of running on while
	// another replica re-runs the node.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	// Pdeathsig fires when the thread that started the child exits, not only the process: keep this
	// goroutine on its thread until the child is gone (golang/go#27505).
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	err = cmd.Start()
	_ = errWrite.Close() // the child has its copy: end of file comes when the process group is done with it
	if err != nil {
		if gateWrite != nil {
			_ = gateWrite.Close()
		}
		return startError(programName(argv), err)
	}
	// Named now, while the process starts on the other core; the file's Close reports a failure.
	stdout.name()
	if gateWrite != nil {
		if err := gate.open(gateWrite); err != nil {
			// The shell reads end of file and exits before the script; the kill makes sure.
			_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
			_ = cmd.Wait()
			return err
		}
	}
	// Wait here, on the locked thread, and let cancellation kill the process group from the
	// context's own goroutine: waiting in a second goroutine cost a hand-off to this locked thread
	// after every node. The whole group dies, not only sh: a script's children must not outlive
	// the run.
	stop := context.AfterFunc(ctx, func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) })
	var stderr bytes.Buffer
	readTail(errRead, &limitedTail{buf: &stderr, max: stderrTail})
	err = cmd.Wait()
	if !stop() {
		return ctx.Err()
	}
	return shellResult(stderr.String(), err)
}

// blockingPipe is a pipe for a node's standard error whose read end the node's own locked thread
// reads with blocking reads until end of file, before it waits for the process: what os/exec does
// for a Writer with a goroutine of its own, whose wake-up through the poller and hand-off back to
// the locked thread cost 0.05-0.15 ms per process (BENCHMARKS.md, issue 34, third session). Both
// ends are close-on-exec, so no other node's process inherits the write end and holds the end of
// file back; os/exec gives the child its standard error as a copy. A startGate's pipe is one too.
func blockingPipe() (read, write *os.File, err error) {
	var fds [2]int
	if err := syscall.Pipe2(fds[:], syscall.O_CLOEXEC); err != nil {
		return nil, nil, err
	}
	// Blocking descriptors: os.NewFile leaves them out of the poller, so a read blocks this thread
	// rather than parking the goroutine, and os/exec hands the write end over as is.
	return os.NewFile(uintptr(fds[0]), "|0"), os.NewFile(uintptr(fds[1]), "|1"), nil
}

// readTail reads r until end of file (every process of the group closed its standard error) or an
// error, keeping what tail keeps.
func readTail(r *os.File, tail *limitedTail) {
	buf := make([]byte, 4096)
	for {
		n, err := r.Read(buf)
		tail.add(buf[:n])
		if err != nil {
			return
		}
	}
}

// devNull is the standard input of every node process: /dev/null, opened once. os/exec opened it
// again for each process (an open, a close and four fcntl calls per node).
var devNull = sync.OnceValues(func() (*os.File, error) { return os.Open(os.DevNull) })

// shellPath finds a shell (sh, or bash for Archon's bash nodes) on the bot's PATH and remembers it once found: exec.Command would search PATH
// again for every node, a stat of each directory before sh's. It is the search exec.Command makes
// (the bot's own PATH, not the node's environment), so the result is the same. A failed search is
// not remembered: installing sh mends the next node without a restart.
func shellPath(name string) (string, error) {
	if p, ok := foundShells.Load(name); ok {
		return p.(string), nil
	}
	p, err := exec.LookPath(name)
	if err == nil {
		foundShells.Store(name, p)
	}
	return p, err
}

var foundShells sync.Map // shell name -> its path, once found

// startError explains a program (sh, or a script's runtime) that could not start. The orchestrator
// keeps the environment under envOutputBudget, so "argument list too long" means the bot's own
// environment is too large.
func startError(prog string, err error) error {
	if errors.Is(err, syscall.E2BIG) {
		return &nodeError{class: db.ClassInfra, msg: "cannot start " + prog + ": its environment is too large (" + err.Error() + ")",
			hint: "remove large variables from the bot's environment"}
	}
	return &nodeError{class: db.ClassInfra, msg: "cannot start " + prog + ": " + err.Error(), hint: "make sure " + prog + " is installed"}
}

func shellResult(errOut string, err error) error {
	if err == nil {
		return nil
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) {
		return &nodeError{class: db.ClassPermanent, msg: err.Error()}
	}
	// A signal is not an answer: "exit status -1" (what ExitCode says for one) told nobody that
	// something stopped the script, and a killed until_bash check is not a check that said no.
	if ws, ok := exit.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return &nodeError{class: db.ClassPermanent, msg: withTail("killed by signal "+unix.SignalName(ws.Signal()), errOut)}
	}
	return &nodeError{class: db.ClassPermanent, msg: withTail(fmt.Sprintf("exit status %d", exit.ExitCode()), errOut), exited: true}
}

// withTail is msg followed by what the process wrote to standard error, if anything.
func withTail(msg, errOut string) string {
	if t := bytes.TrimSpace([]byte(errOut)); len(t) > 0 {
		msg += ": " + string(t)
	}
	return msg
}

// limitedTail keeps the last max bytes written to it.
type limitedTail struct {
	buf *bytes.Buffer
	max int
}

func (l *limitedTail) add(p []byte) {
	l.buf.Write(p)
	if over := l.buf.Len() - l.max; over > 0 {
		l.buf.Next(over)
	}
}

// withTimeout bounds ctx by d when d is set, and says so in the error: a timeout is transient.
func withTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if d <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeoutCause(ctx, d, errNodeTimeout)
}

var errNodeTimeout = errors.New("node timed out")
