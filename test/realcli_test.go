package test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"threadflow/agent/agenttest/stubapi"
	"threadflow/proctag"
	"threadflow/testkit"
	"threadflow/testkit/botproc"
)

// These tests run the real Claude Code and Codex CLIs (npm-installed; .ci/run installs the pinned
// versions under /opt/threadflow-ai) through the real bot, against a loopback stub of their model
// APIs. They skip when a CLI is missing, except on CI (CI=true), where that is a failure.

// realCLI returns the path of an installed CLI: on PATH, or where .ci/run installs it.
func realCLI(t *testing.T, name string) string {
	t.Helper()
	return testkit.Tool(t, name)
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// realCLIDeadline bounds one bot command that starts a real CLI (at most twice: a turn and a
// resumed one), and the wait for a CLI's first request. Claude Code's start-up alone costs about
// 1.1 s of CPU and took 8-19 s on a 2-core CI machine at load 30, so testkit.Deadline (30 s) is too
// tight for it; a hung CLI is still caught, by the bot's idle timeout or by this bound.
const realCLIDeadline = 2 * time.Minute

// aiBot is a terminal on a bot whose AI provider is one real CLI pointed at a stub API.
type aiBot struct {
	*terminal
	name string // claude or codex
	api  *stubapi.API
	tmp  string
}

const aiWorkflows = `name: write
nodes:
  - id: write
    prompt: "Write the file out.txt, then say done."
    permissions: edit
---
name: twice
nodes:
  - id: first
    prompt: "Say hello."
    context: shared
  - id: wait
    depends_on: [first]
    approval: {message: "continue?"}
  - id: second
    depends_on: [wait]
    prompt: "Say hello again."
    context: shared
---
name: look
nodes:
  - id: look
    prompt: "Write the file out.txt, then say done."
    permissions: read
`

func newAIBot(t *testing.T, name string) *aiBot {
	t.Helper()
	bin := realCLI(t, name)
	env := botproc.Env(t)
	dir := t.TempDir()
	for i, src := range strings.Split(aiWorkflows, "---\n") {
		if err := os.WriteFile(filepath.Join(dir, []string{"write.yaml", "twice.yaml", "look.yaml"}[i]), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env["WORKFLOWS_DIR"] = dir
	env["DEFAULT_PROVIDER"] = name
	env["PATH"] = filepath.Dir(bin) + ":" + env["PATH"] // codex's wrapper runs node
	b := &aiBot{terminal: &terminal{t: t, env: env, deadline: realCLIDeadline}, name: name, api: stubapi.Start(t), tmp: t.TempDir()}
	if name == "claude" {
		env["CLAUDE_BIN"] = bin
		// Claude Code retries a failed connection ten times over minutes before it gives up; one
		// retry keeps the refused-connection case short (an operator may set the same).
		env["CLAUDE_CODE_MAX_RETRIES"] = "1"
	} else {
		env["CODEX_BIN"] = bin
	}
	b.connect(b.api.URL(), true)
	return b
}

// connect points the CLI at baseURL, with or without credentials.
func (b *aiBot) connect(baseURL string, loggedIn bool) {
	env := b.env
	for _, k := range []string{"ANTHROPIC_API_KEY", "STUB_OPENAI_KEY"} {
		delete(env, k)
	}
	if b.name == "claude" {
		for _, kv := range b.api.ClaudeEnv() {
			k, v, _ := strings.Cut(kv, "=")
			env[k] = v
		}
		env["ANTHROPIC_BASE_URL"] = baseURL
		if !loggedIn {
			delete(env, "ANTHROPIC_API_KEY")
		}
		return
	}
	for _, kv := range stubapi.CodexHomeAt(b.t, b.tmp, baseURL) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	if !loggedIn {
		delete(env, "STUB_OPENAI_KEY")
	}
}

// start runs a workflow and returns the run id and what the terminal showed.
func (b *aiBot) start(workflow string) (string, string) {
	b.t.Helper()
	out := b.say("/workflow run " + workflow)
	m := consoleRunID.FindStringSubmatch(out)
	if m == nil {
		b.t.Fatalf("no run id in:\n%s", out)
	}
	return m[1], out
}

func (b *aiBot) say(msgs ...string) string {
	b.t.Helper()
	out, code := b.run(append([]string{"chat", "--conversation", "ai", "--user", "console:local"}, msgs...)...)
	if code != 0 {
		b.t.Fatalf("bot chat exited %d:\n%s", code, out)
	}
	return out
}

// resumeCompletes answers normally from now on, resumes the run and checks that it completed and
// that the agent really wrote its file.
func (b *aiBot) resumeCompletes(id string) {
	b.t.Helper()
	b.api.SetMode(stubapi.Normal)
	b.api.SetToolFile("out.txt")
	b.connect(b.api.URL(), true)
	out := b.say("/workflow resume " + id)
	wantIn(b.t, "the resumed run", out, "completed")
	b.wantFile(id)
}

// wantFile checks that the agent's tool call wrote out.txt in the run's working directory.
func (b *aiBot) wantFile(id string) {
	b.t.Helper()
	path := filepath.Join(b.env["THREADFLOW_HOME"], "runs", id, "work", "out.txt")
	if got, err := os.ReadFile(path); err != nil || string(got) != stubapi.ToolFileText {
		b.t.Errorf("%s = %q, %v; want %q written by the agent's tool call", path, got, err, stubapi.ToolFileText)
	}
}

// failsResumable runs the write workflow and checks the run stopped resumable, with the hint.
func (b *aiBot) failsResumable(what string, hints ...string) string {
	b.t.Helper()
	start := time.Now()
	id, out := b.start("write")
	out += b.say("/workflow status " + id)
	b.t.Logf("%s %s: stopped after %s:\n%s", b.name, what, time.Since(start).Round(100*time.Millisecond), out)
	wantIn(b.t, b.name+" "+what, out, hints...)
	if !strings.Contains(out, "paused") && !strings.Contains(out, "failed") {
		b.t.Errorf("%s %s: the run is neither paused nor failed:\n%s", b.name, what, out)
	}
	return id
}

func forEachCLI(t *testing.T, f func(t *testing.T, b *aiBot)) {
	for _, name := range []string{"claude", "codex"} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			f(t, newAIBot(t, name))
		})
	}
}

var loginHint = map[string]string{"claude": "claude /login", "codex": "codex login"}

func TestRealCLINotLoggedIn(t *testing.T) {
	t.Parallel()
	forEachCLI(t, func(t *testing.T, b *aiBot) {
		b.connect(stubapi.ClosedURL(t), false)
		if b.name == "codex" {
			b.connect(b.api.URL(), false)
		}
		id := b.failsResumable("not logged in", loginHint[b.name])
		b.resumeCompletes(id)
	})
}

func TestRealCLIUnauthorized(t *testing.T) {
	t.Parallel()
	forEachCLI(t, func(t *testing.T, b *aiBot) {
		b.api.SetMode(stubapi.Unauthorized)
		id := b.failsResumable("401", loginHint[b.name])
		b.resumeCompletes(id)
	})
}

func TestRealCLIConnectionRefused(t *testing.T) {
	t.Parallel()
	forEachCLI(t, func(t *testing.T, b *aiBot) {
		b.connect(stubapi.ClosedURL(t), true)
		id := b.failsResumable("refused connection", "cannot reach its API", "network")
		b.resumeCompletes(id)
	})
}

// A shared session is continued: the second node resumes the first node's session (with the
// permission and sandbox flags on the resume command line too).
func TestRealCLIResumesASharedSession(t *testing.T) {
	t.Parallel()
	forEachCLI(t, func(t *testing.T, b *aiBot) {
		id, out := b.start("twice")
		wantIn(t, "the first turn", out, "continue?")
		out = b.say("/workflow approve " + id)
		wantIn(t, "the resumed run", out, "completed")
		if strings.Contains(out, "Session continuity was lost") {
			t.Errorf("the live session was reported lost:\n%s", out)
		}
	})
}

// A shared session the CLI no longer has (its session files are gone) is replaced by a fresh one.
func TestRealCLIUnknownSession(t *testing.T) {
	t.Parallel()
	forEachCLI(t, func(t *testing.T, b *aiBot) {
		id, out := b.start("twice")
		wantIn(t, "the first turn", out, "continue?")
		// Forget every session the CLI stored: the run's shared session id is now unknown to it.
		for _, d := range []string{filepath.Join(b.env["HOME"], ".claude", "projects"), filepath.Join(b.tmp, "codex-home", "sessions")} {
			if err := os.RemoveAll(d); err != nil {
				t.Fatal(err)
			}
		}
		out = b.say("/workflow approve " + id)
		wantIn(t, "the resumed run", out, "Session continuity was lost", "completed")
	})
}

// An edit refused under permissions: read fails the node, naming the tool. Only Claude Code reports
// refusals; Codex's sandbox refuses silently (docs/workflows.md), so only the file is checked there.
func TestRealCLIPermissionDenied(t *testing.T) {
	t.Parallel()
	forEachCLI(t, func(t *testing.T, b *aiBot) {
		b.api.SetToolFile("out.txt")
		id, out := b.start("look")
		if b.name == "claude" {
			wantIn(t, "the refused edit", out, "failed", "refused permission to use Write under permissions: read")
		}
		path := filepath.Join(b.env["THREADFLOW_HOME"], "runs", id, "work", "out.txt")
		if fileExists(path) {
			t.Errorf("%s exists: the agent wrote under permissions: read", path)
		}
	})
}

// A CLI whose API never answers is killed after AGENT_IDLE_TIMEOUT with everything it started; the
// run stays resumable and the conversation's next message is answered.
func TestRealCLIHangIsKilled(t *testing.T) {
	t.Parallel()
	forEachCLI(t, func(t *testing.T, b *aiBot) {
		b.env["AGENT_IDLE_TIMEOUT"] = "3s"
		b.api.SetMode(stubapi.Hang)
		id := b.failsResumable("hang", "printed nothing for 3s", "AGENT_IDLE_TIMEOUT")
		if pids := proctag.Scan(proctag.RunEnv)[id]; len(pids) > 0 {
			t.Errorf("processes tagged with run %s survive: %v", id, pids)
		}
		b.api.SetMode(stubapi.Normal)
		// A CLI starting on a loaded machine can take longer than 3s to print its first line.
		b.env["AGENT_IDLE_TIMEOUT"] = "2m"
		out := b.say("hello there")
		wantIn(t, "the next message's answer", out, stubapi.Reply)
		b.resumeCompletes(id)
	})
}

// Interrupting `bot chat` while the assistant's turn waits on a silent API leaves no CLI process
// behind.
func TestRealCLIInterruptedChatLeavesNoProcess(t *testing.T) {
	t.Parallel()
	forEachCLI(t, func(t *testing.T, b *aiBot) {
		b.api.SetMode(stubapi.Hang)
		marker := "THREADFLOW_TEST_MARKER=" + b.tmp // unique to this subtest
		cmd := botproc.CommandContext(context.Background(), t, b.env, "chat", "--conversation", "ai", "--user", "console:local", "hello there")
		cmd.Env = append(cmd.Env, marker)
		var stderr strings.Builder
		cmd.Stderr = &stderr
		defer func() {
			if t.Failed() {
				t.Logf("bot stderr:\n%s", stderr.String())
			}
		}()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		testkit.EventuallyWithin(t, realCLIDeadline, "the CLI's request to reach the stub", func() bool { return b.api.Requests() > 0 })
		if err := cmd.Process.Signal(os.Interrupt); err != nil {
			t.Fatal(err)
		}
		select {
		case <-done:
		case <-time.After(testkit.Deadline):
			_ = cmd.Process.Kill()
			t.Fatal("bot chat did not exit after SIGINT")
		}
		name, value, _ := strings.Cut(marker, "=")
		if pids := proctag.Scan(name)[value]; len(pids) > 0 {
			for _, pid := range pids {
				cmdline, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
				t.Logf("survivor %d: %q", pid, cmdline)
			}
			_ = proctag.Kill(pids, marker)
			t.Fatalf("processes of the interrupted chat survive: %v", pids)
		}
	})
}
