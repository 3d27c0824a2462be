package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// binDir holds the bot binary built for the process tests; TestMain removes it.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "threadflow-bot-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

var (
	buildOnce sync.Once
	buildErr  error
)

// botBinary builds the real binary once per test run: process behaviour (signals, exit status,
// what reaches the terminal) is only observable from outside.
func botBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(binDir, "threadflow")
	buildOnce.Do(func() {
		out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return bin
}

// userHome is the default THREADFLOW_HOME of a process whose HOME is dir (and XDG_DATA_HOME unset).
func userHome(dir string) string { return filepath.Join(dir, ".local", "share", "threadflow") }

// botProcess is a running bot binary.
type botProcess struct {
	cmd    *exec.Cmd
	stdout *lineWriter
	stderr *lineWriter
	exited chan struct{} // closed when the process has exited
}

// startBot starts the binary in dir with only PATH, HOME and env in its environment, so the
// developer's own settings cannot leak in. It is killed if still running when the test ends.
func startBot(t *testing.T, dir string, env ...string) *botProcess {
	t.Helper()
	p := &botProcess{stdout: newLineWriter(), stderr: newLineWriter(), exited: make(chan struct{})}
	p.cmd = exec.Command(botBinary(t))
	p.cmd.Dir = dir
	p.cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}, env...)
	p.cmd.Stdout, p.cmd.Stderr = p.stdout, p.stderr
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start bot: %v", err)
	}
	go func() {
		_ = p.cmd.Wait() // the exit status is read from ProcessState
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	})
	return p
}

// waitExit waits for the process to exit and returns its exit status.
func (p *botProcess) waitExit(t *testing.T) int {
	t.Helper()
	select {
	case <-p.exited:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(testDeadline):
		t.Fatalf("bot still running after %s; stderr:\n%s", testDeadline, p.stderr)
		return -1
	}
}

// stop sends sig and expects a clean exit.
func (p *botProcess) stop(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatalf("signal %v: %v", sig, err)
	}
	if code := p.waitExit(t); code != 0 {
		t.Errorf("exit status after %v = %d, want 0; stderr:\n%s", sig, code, p.stderr)
	}
	if !strings.Contains(p.stderr.String(), `"bot.shutdown_completed"`) {
		t.Errorf("no bot.shutdown_completed after %v; stderr:\n%s", sig, p.stderr)
	}
}

func TestProcessStartsWithoutConfigurationAndStopsOnSignal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			// HTTP_ADDR is the one setting given: the default port may be taken on this machine.
			p := startBot(t, dir, "HTTP_ADDR=127.0.0.1:0")
			base := waitURL(t, p.stdout, p.exited, p.stderr)
			assertReady(t, base)
			db := filepath.Join(userHome(dir), "threadflow.db")
			if _, err := os.Stat(db); err != nil {
				t.Errorf("default SQLite database not created: %v", err)
			}
			if want := "New database " + db + ": THREADFLOW_HOME is unset, so runs are kept in " + userHome(dir) + ", wherever a command runs"; !strings.Contains(p.stderr.String(), want) {
				t.Errorf("stderr does not say %q:\n%s", want, p.stderr)
			}
			if _, err := os.Stat(filepath.Join(dir, ".threadflow")); !os.IsNotExist(err) {
				t.Errorf("the server made a home in its working directory (stat: %v)", err)
			}
			p.stop(t, sig)
		})
	}
}

func TestProcessRejectsBadConfiguration(t *testing.T) {
	tests := []struct {
		env  string
		want string
	}{
		{"LOG_LEVEL=loud", `threadflow: LOG_LEVEL="loud" is not valid; use one of debug, info, warn, error`},
		{"DATABASE_URL=mysql://x", `threadflow: DATABASE_URL="mysql://x" is not valid; use a postgres:// or postgresql:// URL, or leave it empty to use SQLite under THREADFLOW_HOME`},
		{"LEASE_TTL=forever", `threadflow: LEASE_TTL="forever" is not valid; use a duration of at least 1s, such as 30s or 2m`},
	}
	for _, tt := range tests {
		t.Run(tt.env, func(t *testing.T) {
			dir := t.TempDir()
			p := startBot(t, dir, tt.env)
			if code := p.waitExit(t); code != 2 {
				t.Errorf("exit status %d, want 2", code)
			}
			if got := p.stderr.String(); got != tt.want+"\n" {
				t.Errorf("stderr = %q, want exactly the one line %q", got, tt.want)
			}
			if out := p.stdout.String(); out != "" {
				t.Errorf("stdout = %q, want nothing", out)
			}
			if _, err := os.Stat(userHome(dir)); !os.IsNotExist(err) {
				t.Errorf("a rejected configuration still created THREADFLOW_HOME (stat: %v)", err)
			}
		})
	}
}
