package test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"threadflow/db/dbtest"
)

// e2eDeadline bounds every wait of these tests. It is a failure bound, not a measurement: the
// machine running them may be slow and shared.
const e2eDeadline = 30 * time.Second

// dumpLines is how much of a bot's stderr (its JSON log) a failed test prints.
const dumpLines = 150

// binaryBuild builds ./cmd/bot at most once per test binary, into a directory TestMain removes.
type binaryBuild struct {
	dir  string
	once sync.Once
	path string
	err  error
}

// bot is the one build shared by every test of the package.
var bot binaryBuild

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "threadflow-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e: temp dir for the bot binary:", err)
		os.Exit(1)
	}
	bot.dir = dir
	code := m.Run()
	_ = os.RemoveAll(dir) // a leftover temp dir is not worth failing the run for
	os.Exit(code)
}

// binary returns the path of the built bot, building it on first use. The module path is used
// rather than a relative one so the tests work from any working directory inside the module.
func (b *binaryBuild) binary(t testing.TB) string {
	t.Helper()
	b.once.Do(func() {
		b.path = filepath.Join(b.dir, "threadflow")
		args := []string{"build", "-o", b.path}
		if raceEnabled() {
			// A data race in the bot then makes it exit 66, which Stop reports.
			args = append(args, "-race")
		}
		out, err := exec.Command("go", append(args, "threadflow/cmd/bot")...).CombinedOutput()
		if err != nil {
			b.err = fmt.Errorf("go build threadflow/cmd/bot: %v\n%s", err, out)
		}
	})
	if b.err != nil {
		t.Fatal(b.err)
	}
	return b.path
}

// raceEnabled reports whether these tests were built with -race; the bot is then built with it too.
func raceEnabled() bool {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return false
	}
	for _, s := range info.Settings {
		if s.Key == "-race" {
			return s.Value == "true"
		}
	}
	return false
}

// botEnv is the environment every end-to-end bot starts from: its own home (and so its own SQLite
// database), a free loopback port, JSON debug logs, and PATH for the shell nodes. Nothing of the
// developer's environment leaks in. Callers add the platform's settings.
func botEnv(t testing.TB) map[string]string {
	t.Helper()
	home := t.TempDir()
	return map[string]string{
		"PATH":            os.Getenv("PATH"),
		"HOME":            home,
		"THREADFLOW_HOME": filepath.Join(home, "threadflow"),
		"HTTP_ADDR":       "127.0.0.1:0",
		"LOG_FORMAT":      "json",
		"LOG_LEVEL":       "debug",
	}
}

// forEachEngine runs f as the parallel subtests "sqlite" and "postgres", each with a fresh botEnv;
// the postgres one also has DATABASE_URL naming a fresh database (dropped after the bot stopped).
// The postgres subtest skips without TEST_DATABASE_URL, and fails when CI=true.
func forEachEngine(t *testing.T, f func(t *testing.T, env map[string]string)) {
	t.Helper()
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			env := botEnv(t)
			if engine == "postgres" {
				env["DATABASE_URL"] = dbtest.PostgresDatabase(t)
			}
			f(t, env)
		})
	}
}

// botProcess is a running bot binary. Its methods fail the test they were started in.
type botProcess struct {
	t   testing.TB
	env map[string]string

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{} // closed when the current process has exited
	frozen bool
	url    string
	stdout *outputLog // the current run's stdout
	stderr *outputLog // every run's stderr, restarts included
}

// startBot starts the bot with exactly env as its environment and waits until it prints
// "Threadflow is up: URL". The bot is stopped with SIGTERM when the test ends (and must exit 0
// then); its log is printed when the test failed.
func startBot(t testing.TB, env map[string]string) *botProcess {
	t.Helper()
	p := &botProcess{t: t, env: env, stderr: newOutputLog()}
	p.launch()
	t.Cleanup(p.cleanup)
	return p
}

var upLine = regexp.MustCompile(`^Threadflow is up: (http://\S+/)$`)

// launch starts a process and waits for its up line.
func (p *botProcess) launch() {
	p.t.Helper()
	stdout := newOutputLog()
	cmd := exec.Command(bot.binary(p.t))
	cmd.Env = envList(p.env)
	cmd.Dir = p.env["HOME"]
	cmd.Stdout, cmd.Stderr = stdout, p.stderr
	if err := cmd.Start(); err != nil {
		p.t.Fatalf("e2e: start the bot: %v", err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait() // the exit status is read from ProcessState
		close(exited)
	}()
	p.mu.Lock()
	p.cmd, p.exited, p.frozen, p.stdout = cmd, exited, false, stdout
	p.mu.Unlock()
	m := stdout.waitLine(p.t, upLine, exited, p.stderr)
	p.mu.Lock()
	p.url = m[1]
	p.mu.Unlock()
}

func envList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}

// URL is the bot's HTTP base URL, as it printed it.
func (p *botProcess) URL() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.url
}

// WaitStdout waits until the current run of the bot prints a line matching re.
func (p *botProcess) WaitStdout(re *regexp.Regexp) {
	p.t.Helper()
	p.mu.Lock()
	stdout, exited := p.stdout, p.exited
	p.mu.Unlock()
	stdout.waitLine(p.t, re, exited, p.stderr)
}

// Stderr is everything the bot wrote to stderr so far, over every restart.
func (p *botProcess) Stderr() string { return p.stderr.String() }

// LogEvents returns the bot's JSON log lines whose event name (zap's "msg") is event.
func (p *botProcess) LogEvents(event string) []map[string]any {
	return logEvents(p.Stderr(), event)
}

// WaitLog waits until the bot logs event with every field of fields equal (compared as printed),
// such as WaitLog("orchestrator.run_stopped", map[string]string{"run_id": id}).
func (p *botProcess) WaitLog(event string, fields map[string]string) {
	p.t.Helper()
	deadline := time.NewTimer(e2eDeadline)
	defer deadline.Stop()
	for {
		text, changed := p.stderr.snapshot()
		for _, rec := range logEvents(text, event) {
			if hasFields(rec, fields) {
				return
			}
		}
		select {
		case <-changed:
		case <-deadline.C:
			p.t.Fatalf("e2e: the bot did not log %s %v within %v", event, fields, e2eDeadline)
		}
	}
}

func logEvents(text, event string) []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(text, "\n") {
		var rec map[string]any
		if json.Unmarshal([]byte(line), &rec) == nil && rec["msg"] == event {
			out = append(out, rec)
		}
	}
	return out
}

func hasFields(rec map[string]any, fields map[string]string) bool {
	for k, want := range fields {
		if fmt.Sprint(rec[k]) != want {
			return false
		}
	}
	return true
}

// Stop sends SIGTERM and expects a clean exit (status 0) within the deadline.
func (p *botProcess) Stop() {
	p.t.Helper()
	p.signal(syscall.SIGTERM)
	if code := p.wait(); code != 0 {
		p.t.Errorf("e2e: bot exit status after SIGTERM = %d, want 0", code)
	}
}

// Kill sends SIGKILL, like a crash or an OOM kill, and waits for the process to be gone.
func (p *botProcess) Kill() {
	p.t.Helper()
	p.signal(syscall.SIGKILL)
	p.wait()
}

// Freeze stops the process with SIGSTOP: it holds its connections and leases but does nothing, like
// a machine that hangs. Thaw resumes it.
func (p *botProcess) Freeze() {
	p.t.Helper()
	p.signal(syscall.SIGSTOP)
	p.mu.Lock()
	p.frozen = true
	p.mu.Unlock()
}

// Thaw resumes a frozen process with SIGCONT.
func (p *botProcess) Thaw() {
	p.t.Helper()
	p.signal(syscall.SIGCONT)
	p.mu.Lock()
	p.frozen = false
	p.mu.Unlock()
}

// Restart starts the bot again with the same environment (same home and database) after Stop or
// Kill, and waits until it is up.
func (p *botProcess) Restart() {
	p.t.Helper()
	if p.running() {
		p.t.Fatal("e2e: Restart of a bot that is still running; Stop or Kill it first")
	}
	p.launch()
}

func (p *botProcess) running() bool {
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

func (p *botProcess) signal(sig syscall.Signal) {
	p.t.Helper()
	p.mu.Lock()
	proc := p.cmd.Process
	p.mu.Unlock()
	if err := proc.Signal(sig); err != nil {
		p.t.Fatalf("e2e: signal %v to the bot: %v", sig, err)
	}
}

// wait waits for the current process to exit and returns its exit status (-1 for a signal).
func (p *botProcess) wait() int {
	p.t.Helper()
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.mu.Unlock()
	select {
	case <-exited:
		return cmd.ProcessState.ExitCode()
	case <-time.After(e2eDeadline):
		_ = cmd.Process.Kill()
		<-exited
		p.t.Fatalf("e2e: bot still running %v after it was told to stop", e2eDeadline)
		return -1
	}
}

// cleanup stops a bot still running with SIGTERM (thawing it first) and prints its log when the
// test failed.
func (p *botProcess) cleanup() {
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
		p.t.Logf("e2e: last %d lines of the bot's stderr:\n%s", dumpLines, p.stderr.tail(dumpLines))
	}
}

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
	lines := strings.Split(strings.TrimRight(o.String(), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// waitLine waits for a complete line matching re and returns its submatches. It fails the test at
// once with stderr when the process exits first.
func (o *outputLog) waitLine(t testing.TB, re *regexp.Regexp, exited <-chan struct{}, stderr *outputLog) []string {
	t.Helper()
	deadline := time.NewTimer(e2eDeadline)
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
			t.Fatalf("e2e: bot exited before printing a line matching %s; stdout:\n%s\nstderr:\n%s", re, text, stderr.tail(dumpLines))
		case <-deadline.C:
			t.Fatalf("e2e: no line matching %s within %v; stdout:\n%s\nstderr:\n%s", re, e2eDeadline, text, stderr.tail(dumpLines))
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
