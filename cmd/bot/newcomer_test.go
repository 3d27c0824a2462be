package main

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"threadflow/testkit/botproc"
)

// The errors of a newcomer's first hour: each names the setting or file, what was wrong and the
// next step (issue 17).

const brokenFlow = "name: typo\nnodes:\n  - id: a\n    bsh: echo hi\n"

func TestRunningABrokenWorkflowShowsItsProblems(t *testing.T) {
	env := cliEnv(t)
	file := addWorkflow(t, env, "typo", brokenFlow)
	c := runBot(t, env, "chat", "/workflow run typo")
	code, out := exitCode(c.result(t)), c.stdout.String()
	if code != 0 || !strings.Contains(out, file+":4:5: unknown field `bsh` in a node; did you mean `bash`?") ||
		!strings.Contains(out, "bot workflow validate "+file) || strings.Contains(out, "no workflow named") {
		t.Errorf("/workflow run typo = exit %d:\n%s\nwant the file's problem with file:line:col and how to check the fix", code, out)
	}
	// The terminal names the broken file when it starts, on stderr, as a sentence rather than a log.
	if s := c.stderr.String(); !strings.Contains(s, "Workflow files with problems are left out until fixed") || strings.Contains(s, `"level"`) {
		t.Errorf("stderr of bot chat with a broken file:\n%s", s)
	}
	// Running it still says why it cannot run, though the list of problems was shown already.
	b := runBot(t, env, "workflow", "run", "typo")
	err := b.result(t)
	if exitCode(err) != 2 || !strings.Contains(b.stderr.String(), file+":4:5:") || !strings.Contains(b.stderr.String(), "bot workflow validate "+file) {
		t.Errorf("bot workflow run typo = exit %d, stderr:\n%s", exitCode(err), b.stderr)
	}
}

func TestTyposGetADidYouMean(t *testing.T) {
	out, code := cli(t, cliEnv(t), "chat", "/workflow rnu hello")
	if code != 0 || !strings.Contains(out, `unknown subcommand at column 11 (did you mean "run"?)`) {
		t.Errorf("/workflow rnu = exit %d:\n%s", code, out)
	}
	out, _ = cli(t, cliEnv(t), "chat", "/workflow run helo")
	if !strings.Contains(out, "Did you mean `hello`?") {
		t.Errorf("/workflow run helo:\n%s", out)
	}
	for _, tt := range []struct{ args, want string }{
		{"wrkflow list", `unknown command "wrkflow" (did you mean "workflow"?)`},
		{"workflow rnu hello", `unknown workflow command "rnu" (did you mean "run"?); bot workflow help lists them`},
		{"workflow run helo", `no workflow named "helo" (did you mean "hello"?); bot workflow list shows them`},
	} {
		b := runBot(t, cliEnv(t), strings.Fields(tt.args)...)
		if err := b.result(t); exitCode(err) != 2 || !strings.Contains(b.stderr.String(), tt.want) {
			t.Errorf("bot %s = exit %d, stderr %q; want 2 and %q", tt.args, exitCode(err), b.stderr, tt.want)
		}
	}
}

func TestEveryHelpIsReachable(t *testing.T) {
	out, code := cli(t, cliEnv(t), "help")
	if code != 0 || !strings.Contains(out, "bot workflow help") || !strings.Contains(out, "version") {
		t.Fatalf("bot help = exit %d:\n%s", code, out)
	}
	for _, args := range [][]string{{"workflow", "help"}, {"workflow", "--help"}, {"workflow", "-h"}} {
		out, code := cli(t, cliEnv(t), args...)
		if code != 0 || !strings.Contains(out, "bot workflow runs [--json]") || !strings.Contains(out, "3 when it\npaused") {
			t.Errorf("bot %s = exit %d:\n%s", strings.Join(args, " "), code, out)
		}
	}
	out, code = cli(t, cliEnv(t), "chat", "-h")
	if code != 0 || !strings.Contains(out, "usage: bot chat") || !strings.Contains(out, "-conversation") {
		t.Errorf("bot chat -h = exit %d:\n%s", code, out)
	}
	b := runBot(t, cliEnv(t), "chat", "--bogus")
	if err := b.result(t); exitCode(err) != 2 || b.stderr.String() != "threadflow: flag provided but not defined: -bogus; bot chat -h lists the flags\n" {
		t.Errorf("bot chat --bogus = exit %d, stderr %q", exitCode(err), b.stderr)
	}
	b = runBot(t, cliEnv(t), "workflow")
	if err := b.result(t); exitCode(err) != 2 || !strings.Contains(b.stderr.String(), "bot workflow help lists them") {
		t.Errorf("bot workflow = exit %d, stderr %q", exitCode(err), b.stderr)
	}
	out, code = cli(t, cliEnv(t), "version")
	if code != 0 || !strings.HasPrefix(out, "threadflow ") || !strings.Contains(out, "go1.") {
		t.Errorf("bot version = exit %d: %q", code, out)
	}
}

func TestServeReportsBrokenWorkflowFilesAtStartAndOnReload(t *testing.T) {
	dir := t.TempDir()
	first := filepath.Join(dir, "typo.yaml")
	writeFile(t, first, brokenFlow)
	b := runBot(t, map[string]string{"THREADFLOW_HOME": t.TempDir(), "HTTP_ADDR": "127.0.0.1:0", "WORKFLOWS_DIR": dir, "LOG_LEVEL": "error"})
	waitURL(t, b.stdout, b.done, b.stderr)
	waitLine(t, b, first+":4:5: unknown field `bsh`")

	second := filepath.Join(dir, "other.yaml")
	writeFile(t, second, "name: other\nnodes:\n  - id: a\n    bash: echo\n    depends_on: [nope]\n")
	waitLine(t, b, second+":5:")

	for _, f := range []string{first, second} {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	waitLine(t, b, "Every workflow file is valid again.")
}

func TestPortInUseNamesHTTPAddrAndTheFix(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	addr := ln.Addr().String()
	b := runBot(t, map[string]string{"THREADFLOW_HOME": t.TempDir(), "HTTP_ADDR": addr, "LOG_LEVEL": "error"})
	err = b.result(t)
	want := "threadflow: listen on HTTP_ADDR " + addr + ": the port is already in use by another program (perhaps another Threadflow); " +
		"stop it, or set HTTP_ADDR (or -http-addr) to a free port"
	if exitCode(err) != 1 || !strings.Contains(b.stderr.String(), want) {
		t.Errorf("exit %d, stderr:\n%s\nwant %q", exitCode(err), b.stderr, want)
	}
}

func TestUnwritableHomeNamesTheSettingAndThePermission(t *testing.T) {
	dir, err := os.MkdirTemp("", "threadflow-ro-") // not t.TempDir: its parents are private to this user
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(dir, 0o700); _ = os.RemoveAll(dir) })
	home := filepath.Join(dir, "home")
	if err := os.Mkdir(home, 0o555); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct{ home, what string }{{home, "is not writable"}, {filepath.Join(home, "sub"), "cannot be created"}} {
		cmd := exec.Command(botproc.Binary(t), "chat", "/workflow list")
		cmd.Dir = dir
		cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "THREADFLOW_HOME=" + tt.home}
		runUnprivileged(t, cmd)
		out, err := cmd.CombinedOutput()
		if cmd.ProcessState == nil || cmd.ProcessState.ExitCode() != 1 {
			t.Fatalf("bot chat with THREADFLOW_HOME=%s: %v\n%s", tt.home, err, out)
		}
		s := string(out)
		for _, want := range []string{"THREADFLOW_HOME=" + tt.home + " " + tt.what, "permission denied", "lacks write permission there",
			"set THREADFLOW_HOME (or -home) to a directory this user can write"} {
			if !strings.Contains(s, want) {
				t.Errorf("output lacks %q:\n%s", want, s)
			}
		}
		if strings.Contains(s, "(14)") {
			t.Errorf("output still shows SQLite's code:\n%s", s)
		}
	}
}

// runUnprivileged makes cmd run as nobody when the tests run as root, whom no permission stops.
func runUnprivileged(t *testing.T, cmd *exec.Cmd) {
	t.Helper()
	if os.Geteuid() != 0 {
		return
	}
	bin := filepath.Dir(cmd.Path)
	if err := os.Chmod(bin, 0o755); err != nil { // the test binary's directory, private by default
		t.Fatal(err)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
}

func TestSecondServerOnOneSQLiteFileIsRefusedWithThePID(t *testing.T) {
	dir := t.TempDir()
	first := launchIn(t, dir, "HTTP_ADDR=127.0.0.1:0")
	serving(t, first)
	second := launchIn(t, dir, "HTTP_ADDR=127.0.0.1:0")
	if code := second.Exit(); code != 1 {
		t.Fatalf("second server exit status %d, want 1; stderr:\n%s", code, second.Stderr())
	}
	db := filepath.Join(userHome(dir), "threadflow.db")
	want := "threadflow: another Threadflow server (pid " + strconv.Itoa(first.Pid()) + ") already serves the SQLite database " +
		db + " (lock file " + db + ".server-lock); stop that one first, or give this one its own THREADFLOW_HOME"
	if !strings.Contains(second.Stderr(), want) {
		t.Errorf("stderr:\n%s\nwant %q", second.Stderr(), want)
	}
	// Terminals work next to the server, and the lock goes with the server.
	stopClean(t, first, syscall.SIGTERM)
	third := launchIn(t, dir, "HTTP_ADDR=127.0.0.1:0")
	serving(t, third)
	stopClean(t, third, syscall.SIGTERM)
}
