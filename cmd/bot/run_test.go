package main

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"threadflow/testkit"
	"time"
)

// inProcessBot is run called in this process.
type inProcessBot struct {
	stdout, stderr *lineWriter
	stop           context.CancelFunc
	done           chan struct{} // closed when run returned; err is set then
	err            error
}

// runBot calls run with env in a goroutine. The bot is stopped when the test ends.
func runBot(t *testing.T, env map[string]string, args ...string) *inProcessBot {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	b := &inProcessBot{stdout: newLineWriter(), stderr: newLineWriter(), stop: cancel, done: make(chan struct{})}
	go func() {
		defer close(b.done)
		b.err = run(ctx, args, envOf(env), b.stdout, b.stderr)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-b.done:
		case <-time.After(testkit.Deadline):
			t.Errorf("bot still running %s after the test ended", testkit.Deadline)
		}
	})
	return b
}

// result waits for run to return and returns its error.
func (b *inProcessBot) result(t *testing.T) error {
	t.Helper()
	select {
	case <-b.done:
		return b.err
	case <-time.After(testkit.Deadline):
		t.Fatalf("run did not return within %s; stderr:\n%s", testkit.Deadline, b.stderr)
		return nil
	}
}

func TestServeInProcess(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home") // missing: serve creates it
	b := runBot(t, map[string]string{"THREADFLOW_HOME": home, "HTTP_ADDR": "127.0.0.1:0"})
	base := waitURL(t, b.stdout, b.done, b.stderr)

	assertReady(t, base)
	if _, err := os.Stat(filepath.Join(home, "threadflow.db")); err != nil {
		t.Errorf("SQLite database not created under THREADFLOW_HOME: %v", err)
	}
	b.stop()
	if err := b.result(t); err != nil {
		t.Fatalf("run after cancellation = %v, want nil", err)
	}
	logs := b.stderr.String()
	for _, event := range []string{`"bot.start_completed"`, `"http_addr":"` + base + `"`, `"bot.shutdown_completed"`} {
		if !strings.Contains(logs, event) {
			t.Errorf("logs lack %s:\n%s", event, logs)
		}
	}
}

func TestServeFailsWhenPortIsTaken(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	b := runBot(t, map[string]string{"THREADFLOW_HOME": t.TempDir(), "HTTP_ADDR": ln.Addr().String()})
	err = b.result(t)
	if exitCode(err) != 1 || !strings.Contains(b.stderr.String(), "threadflow: listen on HTTP_ADDR "+ln.Addr().String()) {
		t.Errorf("run = %v (exit %d), stderr:\n%s\nwant exit 1 naming HTTP_ADDR", err, exitCode(err), b.stderr)
	}
}

func TestServeReportsUnreachableDatabaseWithoutPassword(t *testing.T) {
	// Port 1 on loopback refuses connections at once.
	b := runBot(t, map[string]string{
		"THREADFLOW_HOME": t.TempDir(), "HTTP_ADDR": "127.0.0.1:0",
		"DATABASE_URL": "postgres://bot:hunter2@127.0.0.1:1/tf?sslmode=disable",
	})
	err := b.result(t)
	out := b.stderr.String()
	if exitCode(err) != 1 {
		t.Errorf("exit code %d, want 1 for an unreachable database (err %v)", exitCode(err), err)
	}
	if want := "threadflow: open postgres database postgres://bot:xxxxx@127.0.0.1:1/tf?sslmode=disable: "; !strings.Contains(out, want) {
		t.Errorf("stderr does not name the database as %q:\n%s", want, out)
	}
	if strings.Contains(out, "hunter2") {
		t.Errorf("stderr shows the database password:\n%s", out)
	}
}

func TestRunCommands(t *testing.T) {
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantStdout string // substring
		wantStderr string // whole stderr
	}{
		{"help", []string{"help"}, 0, "Usage: threadflow [command] [flags]", ""},
		{"-h", []string{"-h"}, 0, "LEASE_TTL", ""},
		{"serve -h", []string{"serve", "-h"}, 0, "-http-addr", ""},
		{"unknown command", []string{"chatt"}, 2, "",
			"threadflow: unknown command \"chatt\" (did you mean \"chat\"?); use one of serve, chat, workflow, audit, prune, migrate, version, help (bot help describes them)\n"},
		{"bad flag", []string{"serve", "-workers=many"}, 2, "",
			"threadflow: -workers=\"many\" is not valid; use a whole number of at least 1\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr strings.Builder
			err := run(t.Context(), tt.args, envOf(nil), &stdout, &stderr)
			if got := exitCode(err); got != tt.wantCode {
				t.Errorf("exit code %d, want %d (err %v)", got, tt.wantCode, err)
			}
			if !strings.Contains(stdout.String(), tt.wantStdout) {
				t.Errorf("stdout lacks %q:\n%s", tt.wantStdout, stdout.String())
			}
			if stderr.String() != tt.wantStderr {
				t.Errorf("stderr = %q, want %q", stderr.String(), tt.wantStderr)
			}
		})
	}
}

func TestMigrateSQLite(t *testing.T) {
	home := filepath.Join(t.TempDir(), "home")
	var stdout, stderr strings.Builder
	err := run(t.Context(), []string{"migrate"}, envOf(map[string]string{"THREADFLOW_HOME": home}), &stdout, &stderr)
	if err != nil {
		t.Fatalf("migrate: %v\n%s", err, stderr.String())
	}
	dbPath := filepath.Join(home, "threadflow.db")
	if want := "Migrations applied: " + dbPath + "\n"; stdout.String() != want {
		t.Errorf("stdout = %q, want %q", stdout.String(), want)
	}
	if _, err := os.Stat(dbPath); err != nil {
		t.Errorf("migrate did not create the database: %v", err)
	}
}
