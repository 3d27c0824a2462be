package botproc

import (
	"encoding/json"
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"

	"threadflow/testkit"
)

// dumpLines is how much of a bot's stderr (its JSON log) a failed test prints.
const dumpLines = 150

// Process is a running bot binary. Its methods fail the test it was started in.
type Process struct {
	t     testing.TB
	env   map[string]string
	args  []string
	stdin io.Reader

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{} // closed when the current process has exited
	frozen bool
	url    string
	stdout *outputLog // the current run's stdout
	stderr *outputLog // every run's stderr, restarts included
}

// Start starts `bot` (the server) with exactly env as its environment and waits until it prints
// "Threadflow is up: URL". The bot is stopped with SIGTERM when the test ends (and must exit 0
// then); its log is printed when the test failed.
func Start(t testing.TB, env map[string]string) *Process {
	t.Helper()
	p := Launch(t, env, nil)
	p.WaitUp()
	return p
}

// Launch starts `bot ARGS...` with exactly env as its environment and stdin as its input (nil for
// none), and returns at once: for a command that is expected to fail, or whose output the test
// follows itself. The end of the test treats it as Start's.
func Launch(t testing.TB, env map[string]string, stdin io.Reader, args ...string) *Process {
	t.Helper()
	p := &Process{t: t, env: env, args: args, stdin: stdin, stderr: newOutputLog()}
	p.launch()
	t.Cleanup(p.cleanup)
	return p
}

var upLine = regexp.MustCompile(`^Threadflow is up: (http://\S+/)$`)

// launch starts a process.
func (p *Process) launch() {
	p.t.Helper()
	stdout := newOutputLog()
	cmd := exec.Command(Binary(p.t), p.args...)
	cmd.Env, cmd.Dir = EnvList(p.env), p.env["HOME"]
	cmd.Stdin, cmd.Stdout, cmd.Stderr = p.stdin, stdout, p.stderr
	if err := cmd.Start(); err != nil {
		p.t.Fatalf("botproc: start the bot: %v", err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait() // the exit status is read from ProcessState
		close(exited)
	}()
	p.mu.Lock()
	p.cmd, p.exited, p.frozen, p.stdout, p.url = cmd, exited, false, stdout, ""
	p.mu.Unlock()
}

// WaitUp waits until the current run of the bot printed its up line, and returns the URL it names.
func (p *Process) WaitUp() string {
	p.t.Helper()
	m := p.WaitStdout(upLine)
	p.mu.Lock()
	p.url = m[1]
	p.mu.Unlock()
	return m[1]
}

// URL is the bot's HTTP base URL, as it printed it.
func (p *Process) URL() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.url
}

// WaitStdout waits until the current run of the bot prints a line matching re, and returns the
// line's submatches. It fails the test at once, with the bot's stderr, if the bot exits first.
func (p *Process) WaitStdout(re *regexp.Regexp) []string {
	p.t.Helper()
	p.mu.Lock()
	stdout, exited := p.stdout, p.exited
	p.mu.Unlock()
	return stdout.waitLine(p.t, re, exited, p.stderr)
}

// Pid is the process id of the current run of the bot.
func (p *Process) Pid() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd.Process.Pid
}

// Stdout is everything the current run of the bot wrote to stdout so far.
func (p *Process) Stdout() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.stdout.String()
}

// Stderr is everything the bot wrote to stderr so far, over every restart.
func (p *Process) Stderr() string { return p.stderr.String() }

// LogEvents returns the bot's JSON log lines whose event name (zap's "msg") is event.
func (p *Process) LogEvents(event string) []map[string]any {
	return logEvents(p.Stderr(), event)
}

// WaitLog waits until the bot logs event with every field of fields equal (compared as printed),
// such as WaitLog("orchestrator.run_stopped", map[string]string{"run_id": id}).
func (p *Process) WaitLog(event string, fields map[string]string) {
	p.t.Helper()
	deadline := time.NewTimer(testkit.Deadline)
	defer deadline.Stop()
	for {
		text, changed := p.stderr.snapshot()
		for _, rec := range logEvents(text, event) {
			if HasFields(rec, fields) {
				return
			}
		}
		select {
		case <-changed:
		case <-deadline.C:
			p.t.Fatalf("botproc: the bot did not log %s %v within %v", event, fields, testkit.Deadline)
		}
	}
}

func logEvents(text, event string) []map[string]any {
	var out []map[string]any
	for _, line := range lines(text) {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == event {
			out = append(out, rec)
		}
	}
	return out
}

// HasFields reports whether a log line has every field of fields, compared as printed.
func HasFields(rec map[string]any, fields map[string]string) bool {
	for k, want := range fields {
		if fmt.Sprint(rec[k]) != want {
			return false
		}
	}
	return true
}

// Stop sends SIGTERM and expects a clean exit (status 0) within the deadline.
func (p *Process) Stop() {
	p.t.Helper()
	p.StopWith(syscall.SIGTERM)
}

// StopWith sends sig (SIGTERM, SIGINT) and expects a clean exit (status 0) within the deadline.
func (p *Process) StopWith(sig syscall.Signal) {
	p.t.Helper()
	p.Signal(sig)
	if code := p.Exit(); code != 0 {
		p.t.Errorf("botproc: bot exit status after %v = %d, want 0", sig, code)
	}
}

// Kill sends SIGKILL, like a crash or an OOM kill, and waits for the process to be gone.
func (p *Process) Kill() {
	p.t.Helper()
	p.Signal(syscall.SIGKILL)
	p.Exit()
}

// Freeze stops the process with SIGSTOP: it holds its connections and leases but does nothing, like
// a machine that hangs. Thaw resumes it.
func (p *Process) Freeze() {
	p.t.Helper()
	p.setFrozen(syscall.SIGSTOP, true)
}

// Thaw resumes a frozen process with SIGCONT.
func (p *Process) Thaw() {
	p.t.Helper()
	p.setFrozen(syscall.SIGCONT, false)
}

// setFrozen sends sig and remembers whether the process is frozen now, so the end of the test
// thaws it before stopping it.
func (p *Process) setFrozen(sig syscall.Signal, frozen bool) {
	p.t.Helper()
	p.Signal(sig)
	p.mu.Lock()
	p.frozen = frozen
	p.mu.Unlock()
}

// Restart starts the bot again with the same environment (same home and database) after Stop or
// Kill, and waits until it is up.
func (p *Process) Restart() {
	p.t.Helper()
	if p.running() {
		p.t.Fatal("botproc: Restart of a bot that is still running; Stop or Kill it first")
	}
	p.launch()
	p.WaitUp()
}

func (p *Process) running() bool {
	p.mu.Lock()
	exited := p.exited
	p.mu.Unlock()
	select {
	case <-exited:
		return false
	default:
		return true
	}
}

// Signal sends sig to the current process.
func (p *Process) Signal(sig syscall.Signal) {
	p.t.Helper()
	p.mu.Lock()
	proc := p.cmd.Process
	p.mu.Unlock()
	if err := proc.Signal(sig); err != nil {
		p.t.Fatalf("botproc: signal %v to the bot: %v", sig, err)
	}
}

// Exit waits for the current process to exit and returns its exit status (-1 for a signal). A bot
// still running after the deadline is killed and fails the test.
func (p *Process) Exit() int {
	p.t.Helper()
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	select {
	case <-exited:
		return cmd.ProcessState.ExitCode()
	case <-time.After(testkit.Deadline):
		_ = cmd.Process.Kill()
		<-exited
		p.t.Fatalf("botproc: bot still running %v after it was told to stop; stderr:\n%s", testkit.Deadline, p.stderr.tail(dumpLines))
		return -1
	}
}

// cleanup stops a bot still running with SIGTERM (thawing it first) and prints its log when the
// test failed.
func (p *Process) cleanup() {
	if p.running() {
		p.mu.Lock()
		frozen := p.frozen
		p.mu.Unlock()
		if frozen {
			p.Thaw()
		}
		p.Stop()
	}
	if p.t.Failed() {
		p.t.Logf("botproc: last %d lines of the bot's stderr:\n%s", dumpLines, p.stderr.tail(dumpLines))
	}
}
