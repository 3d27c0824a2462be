// Package botproc runs the real bot binary for tests, as a person or an operator would: built once
// per test binary, started with exactly the environment a test gives it, watched through what it
// prints. It holds the one engine loop of the tests that start bots, too. It is a package of its
// own, not part of testkit, because it needs db/dbtest, which itself uses testkit. It is imported
// by tests only.
package botproc

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"sort"
	"sync"
	"testing"

	"threadflow/db/dbtest"
)

// build is the one build of the bot shared by every test of a test binary.
var build struct {
	dir  string
	once sync.Once
	path string
	err  error
}

// Main runs a test binary's tests and then removes the bot binary built for them. Call it from
// TestMain: os.Exit(botproc.Main(m)).
func Main(m *testing.M) int {
	dir, err := os.MkdirTemp("", "threadflow-bot-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "botproc: temp dir for the bot binary:", err)
		return 1
	}
	build.dir = dir
	code := m.Run()
	_ = os.RemoveAll(dir) // a leftover temp dir is not worth failing the run for
	return code
}

// Binary returns the path of the built bot, building it on first use (with -race when the tests
// were built with it, so a data race makes the bot exit 66). The module path is used rather than a
// relative one so the tests work from any working directory inside the module.
func Binary(t testing.TB) string {
	t.Helper()
	if build.dir == "" {
		t.Fatal("botproc: the bot binary has no directory; call botproc.Main from TestMain")
	}
	build.once.Do(func() {
		build.path = filepath.Join(build.dir, "threadflow")
		args := []string{"build", "-o", build.path}
		if raceEnabled() {
			args = append(args, "-race")
		}
		out, err := exec.Command("go", append(args, "threadflow/cmd/bot")...).CombinedOutput()
		if err != nil {
			build.err = fmt.Errorf("go build threadflow/cmd/bot: %v\n%s", err, out)
		}
	})
	if build.err != nil {
		t.Fatal(build.err)
	}
	return build.path
}

// raceEnabled reports whether these tests were built with -race.
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

// Env is the environment every end-to-end bot starts from: its own home (and so its own SQLite
// database), a free loopback port, JSON debug logs, and PATH for the shell nodes. Nothing of the
// developer's environment leaks in. Callers add the platform's settings.
func Env(t testing.TB) map[string]string {
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

// ForEachEngine runs f as the parallel subtests "sqlite" and "postgres", each with a fresh
// environment from newEnv (Env, or a package's own); the postgres one also has DATABASE_URL naming
// a fresh database, dropped after the subtest. The postgres subtest skips without
// TEST_DATABASE_URL, and fails when CI=true.
func ForEachEngine(t *testing.T, newEnv func(testing.TB) map[string]string, f func(t *testing.T, env map[string]string)) {
	t.Helper()
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			t.Parallel()
			env := newEnv(t)
			if engine == "postgres" {
				env["DATABASE_URL"] = dbtest.PostgresDatabase(t)
			}
			f(t, env)
		})
	}
}

// CommandContext is the bot binary run with args, exactly env as its environment and the bot's
// HOME as its working directory, for a test that drives the process itself.
func CommandContext(ctx context.Context, t testing.TB, env map[string]string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.CommandContext(ctx, Binary(t), args...)
	cmd.Env, cmd.Dir = EnvList(env), env["HOME"]
	return cmd
}

// EnvList is env as exec.Cmd.Env wants it, sorted so a printed environment reads the same each run.
func EnvList(env map[string]string) []string {
	out := make([]string, 0, len(env))
	for k, v := range env {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return out
}
