// Command fakecli impersonates the Claude Code and Codex CLIs for tests. It reads its script from
// the state directory named by FAKE_AGENT_DIR (see agenttest.Script), records every invocation there,
// and answers in the flavor's JSON event format: a reply, a stale-session error, a rate limit, a
// login failure, a crash, or a hang that lasts until the process group is killed.
package main

import (
	"cmp"
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"threadflow/agent/agenttest/internal/fakestate"
)

const (
	flavorEnv  = "FAKE_AGENT_FLAVOR"
	sleeperEnv = "FAKE_AGENT_SLEEPER" // set on the helper child a hanging fake starts
	// hangFor bounds a hang, so a test that fails to kill the fake does not leave it running for good.
	hangFor = 10 * time.Minute
)

// EnvReply as the scripted reply makes the fake answer with its environment.
const EnvReply = "$ENV"

// Exit statuses.
const (
	exitOK    = 0
	exitError = 1 // what the real CLIs return for a failed turn
	exitUsage = 2 // the fake was invoked wrongly: the test or the provider is broken
	exitCrash = 3
)

func main() { os.Exit(run()) }

func run() int {
	if os.Getenv(sleeperEnv) != "" {
		time.Sleep(hangFor)
		return exitOK
	}
	dir := fakestate.Dir(os.Getenv(fakestate.DirEnv))
	if dir == "" {
		return usage(fmt.Errorf("%s is not set", fakestate.DirEnv))
	}
	inv, err := parseInvocation(os.Args[1:], os.Getenv(flavorEnv))
	if err != nil {
		return usage(err)
	}
	prompt, err := io.ReadAll(os.Stdin)
	if err != nil {
		return usage(fmt.Errorf("read prompt: %w", err))
	}
	p, err := plan(dir, inv, prompt)
	if err != nil {
		return usage(err)
	}
	return act(dir, newSpeaker(inv.flavor, os.Stdout, os.Stderr), inv, p)
}

func usage(err error) int {
	fmt.Fprintln(os.Stderr, "fakecli:", err)
	return exitUsage
}

// turnPlan is what this invocation will do, decided under the state lock.
type turnPlan struct {
	expired bool   // the resumed session is stale
	fail    string // failure kind, "" for a reply
	reply   string
	cost    string // raw JSON of the turn's cost (Claude flavor); "" reports no usage
}

// plan records the call and reads the script in one locked step, so concurrent fakes each consume
// their own failure.
func plan(dir fakestate.Dir, inv invocation, prompt []byte) (turnPlan, error) {
	var p turnPlan
	cwd, err := os.Getwd()
	if err != nil {
		return p, err
	}
	err = dir.Locked(func() error {
		rec := fakestate.Record{Flavor: inv.flavor, Args: inv.args, ResumeSession: inv.resume, Prompt: prompt, Dir: cwd}
		if err := dir.AppendCall(rec); err != nil {
			return err
		}
		if inv.resume != "" {
			if p.expired, err = dir.Expired(inv.resume); err != nil || p.expired {
				return err
			}
		}
		if p.fail, err = dir.TakeFailure(); err != nil {
			return err
		}
		if p.cost, err = dir.Cost(); err != nil {
			return err
		}
		reply, err := dir.Reply()
		p.reply = cmp.Or(reply, "ok: "+firstLine(prompt))
		if p.reply == EnvReply {
			p.reply = strings.Join(os.Environ(), "\n") // lets a test see what reached the CLI
		}
		return err
	})
	return p, err
}

func act(dir fakestate.Dir, sp speaker, inv invocation, p turnPlan) int {
	session := cmp.Or(inv.resume, newSessionID())
	if p.expired {
		sp.expired(inv.resume, newSessionID())
		return exitError
	}
	sp.started(session)
	switch p.fail {
	case "":
		sp.replied(session, p.reply, p.cost)
		return exitOK
	case "rate_limit", "not_logged_in":
		sp.failed(session, p.fail)
		return exitError
	case "crash":
		fmt.Fprintln(os.Stderr, "fakecli: simulated crash")
		return exitCrash
	case "hang":
		return hang(dir)
	}
	return usage(fmt.Errorf("unknown failure kind %q", p.fail))
}

// hang starts a helper child in the same process group (as a real CLI starts tools) and another in
// a session of its own (as Claude Code starts hook commands), records the three pids, and blocks.
// Killing the group ends the first two; only the turn's process tag finds the third.
func hang(dir fakestate.Dir) int {
	self, err := os.Executable()
	if err != nil {
		return usage(err)
	}
	child := exec.Command(self)
	child.Env = append(os.Environ(), sleeperEnv+"=1")
	child.Stdout, child.Stderr = os.Stdout, os.Stderr
	if err := child.Start(); err != nil {
		return usage(fmt.Errorf("start helper: %w", err))
	}
	detached := exec.Command(self)
	detached.Env = append(os.Environ(), sleeperEnv+"=1")
	detached.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := detached.Start(); err != nil {
		return usage(fmt.Errorf("start detached helper: %w", err))
	}
	if err := dir.Locked(func() error { return dir.AddHung(os.Getpid(), child.Process.Pid, detached.Process.Pid) }); err != nil {
		return usage(err)
	}
	time.Sleep(hangFor)
	return exitError
}

func firstLine(prompt []byte) string {
	line, _, _ := strings.Cut(string(prompt), "\n")
	return strings.TrimSuffix(line, "\r")
}

// newSessionID returns a random UUID v4, the shape both real CLIs issue.
func newSessionID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b) // never fails on supported platforms
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
