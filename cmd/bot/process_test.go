package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"threadflow/testkit/botproc"
)

// TestMain removes the bot binary the process tests built: process behaviour (signals, exit
// status, what reaches the terminal) is only observable from outside.
func TestMain(m *testing.M) { os.Exit(botproc.Main(m)) }

// userHome is the default THREADFLOW_HOME of a process whose HOME is dir (and XDG_DATA_HOME unset).
func userHome(dir string) string { return filepath.Join(dir, ".local", "share", "threadflow") }

// launchIn starts the binary in dir with only PATH, HOME (dir) and env in its environment, so the
// developer's own settings cannot leak in.
func launchIn(t *testing.T, dir string, env ...string) *botproc.Process {
	t.Helper()
	vars := map[string]string{"PATH": os.Getenv("PATH"), "HOME": dir}
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	return botproc.Launch(t, vars, nil)
}

var localUp = regexp.MustCompile(`^http://127\.0\.0\.1:[0-9]+/$`)

// serving waits for p's up line and returns its URL, checking that the line is the first thing p
// printed and names the loopback port it listens on, not port 0.
func serving(t *testing.T, p *botproc.Process) string {
	t.Helper()
	base := p.WaitUp()
	if first, _, _ := strings.Cut(p.Stdout(), "\n"); first != "Threadflow is up: "+base {
		t.Fatalf("unexpected stdout line before the up line: %q", first)
	}
	if !localUp.MatchString(base) || strings.HasSuffix(base, ":0/") {
		t.Fatalf("the up line shows %q, not the loopback port listened on", base)
	}
	return base
}

// stopClean sends sig and expects a clean exit, logged as bot.shutdown_completed.
func stopClean(t *testing.T, p *botproc.Process, sig syscall.Signal) {
	t.Helper()
	p.StopWith(sig)
	if !strings.Contains(p.Stderr(), `"bot.shutdown_completed"`) {
		t.Errorf("no bot.shutdown_completed after %v; stderr:\n%s", sig, p.Stderr())
	}
}

func TestProcessStartsWithoutConfigurationAndStopsOnSignal(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			dir := t.TempDir()
			// HTTP_ADDR is the one setting given: the default port may be taken on this machine.
			p := launchIn(t, dir, "HTTP_ADDR=127.0.0.1:0")
			base := serving(t, p)
			assertReady(t, base)
			db := filepath.Join(userHome(dir), "threadflow.db")
			if _, err := os.Stat(db); err != nil {
				t.Errorf("default SQLite database not created: %v", err)
			}
			if want := "New database " + db + ": THREADFLOW_HOME is unset, so runs are kept in " + userHome(dir) + ", wherever a command runs"; !strings.Contains(p.Stderr(), want) {
				t.Errorf("stderr does not say %q:\n%s", want, p.Stderr())
			}
			if _, err := os.Stat(filepath.Join(dir, ".threadflow")); !os.IsNotExist(err) {
				t.Errorf("the server made a home in its working directory (stat: %v)", err)
			}
			stopClean(t, p, sig)
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
			p := launchIn(t, dir, tt.env)
			if code := p.Exit(); code != 2 {
				t.Errorf("exit status %d, want 2", code)
			}
			if got := p.Stderr(); got != tt.want+"\n" {
				t.Errorf("stderr = %q, want exactly the one line %q", got, tt.want)
			}
			if out := p.Stdout(); out != "" {
				t.Errorf("stdout = %q, want nothing", out)
			}
			if _, err := os.Stat(userHome(dir)); !os.IsNotExist(err) {
				t.Errorf("a rejected configuration still created THREADFLOW_HOME (stat: %v)", err)
			}
		})
	}
}
