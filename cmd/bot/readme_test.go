package main

import (
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"threadflow/testkit"
	"threadflow/testkit/botproc"
)

// readmeCommand is what the README promises about one of its shell lines.
type readmeCommand struct {
	exit int
	want string // a substring of stdout, when the line promises something visible
}

// readmeHint is what a line tells the person beyond its stdout: how to continue a paused run on
// stderr, as far as its user may (release does not let its requester approve it), and what stdout
// must not offer them.
type readmeHint struct {
	stderr, without string
}

// selfApprovalHint is what `bot workflow` tells release's requester when the run pauses at its
// gate, which does not let them approve: who may, and what they may do themselves.
const selfApprovalHint = "is paused at gate confirm. Someone other than you must approve it. You may reject it: bot workflow reject "

// readmeWorkflowSection lists every line of the README's `bot workflow` block. A line the README
// gains without an entry here fails the test, so the two cannot drift apart.
var readmeWorkflowSection = map[string]readmeCommand{
	"go build -o bot ./cmd/bot":                              {0, ""}, // built once for the whole test run
	"./bot workflow list":                                    {0, "hello"},
	"./bot workflow validate my-flow.yaml":                   {0, "my-flow.yaml: ok"},
	"./bot workflow validate":                                {0, "Every workflow file is valid: 4 workflows"},
	"./bot workflow run hello world":                         {0, "Hello, world!"},
	"./bot workflow run release v1.4.2":                      {exitPaused, "waiting at `confirm`"},
	"./bot workflow approve RUN_ID":                          {exitPaused, "does not allow self-approval. Nothing was changed. Someone other than you must approve it. You may reject it"},
	"./bot workflow status RUN_ID":                           {0, "paused"},
	"./bot workflow logs RUN_ID check":                       {0, "release v1.4.2 checked"},
	`./bot workflow approve --user bob RUN_ID "looks good"`:  {0, "Approved by console:bob"},
	"./bot workflow runs":                                    {0, "release"},
	"./bot workflow runs --json --state completed --limit 5": {0, `"state": "completed"`},
	"./bot workflow status --json RUN_ID":                    {0, `"id": "confirm"`},
	"./bot workflow triggers":                                {0, "No workflow has triggers"},
	"./bot workflow help":                                    {0, "exit 0 when the run completed"},
	"./bot version":                                          {0, "threadflow "},
}

// readmeHints are the hints of the lines where release's requester meets its gate.
var readmeHints = map[string]readmeHint{
	"./bot workflow run release v1.4.2": {stderr: selfApprovalHint},
	"./bot workflow approve RUN_ID": {stderr: selfApprovalHint + "RUN_ID [REASON]. To approve as someone else here: bot workflow approve --user NAME RUN_ID",
		without: "Approve with this note"},
	`go run ./cmd/bot chat "nah, fix the tests first?"`: {without: "Approve with this note"},
}

// readmeTerminalSection: every `bot chat` line of "Try it in the terminal" answers and exits 0.
var readmeTerminalSection = map[string]readmeCommand{
	`go run ./cmd/bot chat "/workflow list" "/workflow run hello world"`: {0, "Hello, world!"},
	`go run ./cmd/bot chat "/workflow run release v1.4.2"`:               {0, "waiting at `confirm`"},
	`go run ./cmd/bot chat "nah, fix the tests first?"`:                  {0, "Reply again with a clear no (a reason may follow after a comma), or use the button to reject with these words as they are. Someone other than you must approve it."},
	`go run ./cmd/bot chat --user bob "lgtm, ship it"`:                   {0, "Approved by console:bob"},
	`go run ./cmd/bot chat "/workflow status"`:                           {0, "Recently finished"},
}

// threadWord finds talk of threads, which a terminal does not have.
var threadWord = regexp.MustCompile(`(?i)\bthreads?\b`)

// logLine recognises a log record in either format, which must not reach the terminal of `bot
// chat` and `bot workflow` at default settings.
var logLine = regexp.MustCompile(`^\{"level"|\t(DEBUG|INFO|WARN|ERROR)\t`)

// TestReadmeWalkthrough runs the README's quick start, terminal and `bot workflow` sections line by
// line with the built binary, as a newcomer would, in an empty directory with no settings (the one
// exception: the server listens on a free port, as the default one may be taken here).
func TestReadmeWalkthrough(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join("..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	bin, dir := botproc.Binary(t), t.TempDir()
	writeFile(t, filepath.Join(dir, "my-flow.yaml"), "name: my-flow\nnodes:\n  - id: a\n    bash: echo hi\n")

	t.Run("quick start", func(t *testing.T) {
		lines := shellBlock(t, string(readme), "## Quick start")
		if len(lines) != 2 || lines[0] != "go run ./cmd/bot" || !strings.HasPrefix(lines[1], "go test ") {
			t.Fatalf("quick start block = %q; update this test with it", lines)
		}
		p := launchIn(t, dir, "HTTP_ADDR=127.0.0.1:0")
		assertReady(t, serving(t, p))
		stopClean(t, p, syscall.SIGINT)
	})
	runID := ""
	walk := func(t *testing.T, heading string, want map[string]readmeCommand) {
		lines := shellBlock(t, string(readme), heading)
		if len(lines) != len(want) {
			t.Errorf("README section %q has %d commands, this test knows %d", heading, len(lines), len(want))
		}
		for _, line := range lines {
			exp, ok := want[line]
			if !ok {
				t.Fatalf("README line %q is not known to this test; add what it should do", line)
			}
			if strings.HasPrefix(line, "go build ") {
				continue
			}
			args := shellWords(t, strings.ReplaceAll(line, "RUN_ID", runID))
			args = trimInvocation(args)
			stdout, stderr, code := runBinary(t, bin, dir, args)
			if code != exp.exit || !strings.Contains(stdout, exp.want) {
				t.Fatalf("%s\nexit %d (want %d), stdout lacks %q:\n%s\nstderr:\n%s", line, code, exp.exit, exp.want, stdout, stderr)
			}
			hint := readmeHints[line]
			if want := strings.ReplaceAll(hint.stderr, "RUN_ID", runID); !strings.Contains(stderr, want) {
				t.Errorf("%s: stderr lacks the hint %q:\n%s", line, want, stderr)
			}
			if hint.without != "" && strings.Contains(stdout, hint.without) {
				t.Errorf("%s: stdout offers %q:\n%s", line, hint.without, stdout)
			}
			// A terminal reads like a chat: no internal message ids, no line said twice, no threads.
			if strings.Contains(stdout, "(edited") || strings.Count(stdout, "Approved by") > 1 || threadWord.MatchString(stdout) {
				t.Errorf("%s: the terminal shows an edit id, a repeated decision or a thread:\n%s", line, stdout)
			}
			for _, l := range strings.Split(strings.TrimRight(stderr, "\n"), "\n") {
				if logLine.MatchString(l) {
					t.Errorf("%s: a log line reached the terminal at default settings: %q", line, l)
				}
			}
			if m := runIDPattern.FindStringSubmatch(stdout); m != nil && len(args) > 2 && args[1] == "run" {
				runID = m[1]
			}
		}
	}
	t.Run("terminal", func(t *testing.T) { walk(t, "## Try it in the terminal", readmeTerminalSection) })
	t.Run("bot workflow", func(t *testing.T) { walk(t, "For scripts, `bot workflow`", readmeWorkflowSection) })

	// The runs are the user's, not the directory's: a command run elsewhere finds the same ones and
	// leaves no .threadflow behind, here or there.
	t.Run("another directory", func(t *testing.T) {
		elsewhere := filepath.Join(dir, "elsewhere")
		if err := os.Mkdir(elsewhere, 0o755); err != nil {
			t.Fatal(err)
		}
		stdout, stderr, code := runIn(t, bin, elsewhere, []string{"HOME=" + dir}, "workflow", "runs")
		if code != 0 || runID == "" || !strings.Contains(stdout, runID) || stderr != "" {
			t.Errorf("bot workflow runs from another directory = exit %d, stdout:\n%s\nstderr:\n%s\nwant run %s", code, stdout, stderr, runID)
		}
		for _, d := range []string{dir, elsewhere} {
			if _, err := os.Stat(filepath.Join(d, ".threadflow")); !os.IsNotExist(err) {
				t.Errorf("a stray .threadflow in %s (stat: %v)", d, err)
			}
		}
	})
	// The run a person cancels because it hung is the one whose log they need: the terminal that
	// waited says who cancelled it (exit 4), and logs shows what the node printed, marked partial.
	t.Run("logs of a cancelled node", func(t *testing.T) {
		flows := filepath.Join(userHome(dir), "workflows") // $THREADFLOW_HOME/workflows
		if err := os.MkdirAll(flows, 0o755); err != nil {
			t.Fatal(err)
		}
		writeFile(t, filepath.Join(flows, "hang.yaml"), hangWorkflow)
		waiting := exec.Command(bin, "workflow", "run", "hang", filepath.Join(dir, "never"))
		waiting.Dir, waiting.Env = dir, []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir}
		out, errOut := newLineWriter(), newLineWriter()
		waiting.Stdout, waiting.Stderr = out, errOut
		if err := waiting.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = waiting.Process.Kill() }) // after Wait, a no-op
		var id string
		testkit.Eventually(t, "the hung node's first line", func() bool {
			m := runIDPattern.FindStringSubmatch(out.String())
			if m == nil {
				return false
			}
			id = m[1]
			stdout, _, _ := runBinary(t, bin, dir, []string{"workflow", "logs", id, "build"})
			return stdout == "compiling\n"
		})
		if _, _, code := runBinary(t, bin, dir, []string{"workflow", "cancel", id}); code != 0 {
			t.Fatalf("bot workflow cancel %s = exit %d", id, code)
		}
		err := waiting.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != exitCancelled || !strings.Contains(errOut.String(), "run "+id+" was cancelled by ") {
			t.Errorf("the waiting terminal: %v, stderr:\n%s\nwant exit %d and who cancelled the run", err, errOut, exitCancelled)
		}
		for _, l := range strings.Split(errOut.String(), "\n") {
			if logLine.MatchString(l) {
				t.Errorf("a log line reached the waiting terminal: %q", l)
			}
		}
		stdout, stderr, code := runBinary(t, bin, dir, []string{"workflow", "logs", id, "build"})
		if code != 0 || stdout != "compiling\n" || !strings.Contains(stderr, "partial output of attempt 1 of build (10 bytes): the run was cancelled while it ran") {
			t.Errorf("logs of the cancelled node = exit %d, stdout %q, stderr %q", code, stdout, stderr)
		}
		stdout, _, _ = runBinary(t, bin, dir, []string{"workflow", "logs", id})
		if want := "==> build (attempt 1, partial: the run was cancelled while it ran, 10 bytes) <==\ncompiling\n"; stdout != want {
			t.Errorf("logs of the cancelled run = %q, want %q", stdout, want)
		}
	})
}

// shellBlock returns the command lines (comments and blank lines dropped) of the first ```sh block
// after the line starting with heading.
func shellBlock(t *testing.T, readme, heading string) []string {
	t.Helper()
	_, rest, ok := strings.Cut(readme, "\n"+heading)
	if !ok {
		t.Fatalf("README has no %q", heading)
	}
	_, rest, ok = strings.Cut(rest, "```sh\n")
	if !ok {
		t.Fatalf("README has no sh block after %q", heading)
	}
	block, _, _ := strings.Cut(rest, "```")
	var lines []string
	for _, l := range strings.Split(block, "\n") {
		if i := strings.Index(l, "  #"); i >= 0 {
			l = l[:i]
		}
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// shellWords splits a README line as sh would, for the quoting the README uses (double quotes).
func shellWords(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	inQuote, inWord := false, false
	for _, r := range line {
		switch {
		case r == '"':
			inQuote, inWord = !inQuote, true
		case r == ' ' && !inQuote:
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if inQuote {
		t.Fatalf("unbalanced quote in README line %q", line)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}

// trimInvocation drops "./bot" or "go run ./cmd/bot": the test runs the built binary instead.
func trimInvocation(args []string) []string {
	if len(args) >= 3 && args[0] == "go" && args[1] == "run" {
		return args[3:]
	}
	return args[1:]
}

// runBinary runs the binary in dir with only PATH and HOME set, and returns its output and status.
func runBinary(t *testing.T, bin, dir string, args []string) (string, string, int) {
	t.Helper()
	return runIn(t, bin, dir, []string{"HOME=" + dir}, args...)
}

// runIn runs the binary in the directory cwd with PATH and env as its whole environment, and
// returns its output and status.
func runIn(t *testing.T, bin, cwd string, env []string, args ...string) (string, string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = cwd
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("run %v: %v", args, err)
	}
	return stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()
}
