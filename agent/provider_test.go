package agent

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"threadflow/agent/agenttest"
	"threadflow/db"
	"threadflow/testkit"
)

func TestRunReturnsReplyAndNewSession(t *testing.T) {
	for _, f := range flavors {
		t.Run(f.name, func(t *testing.T) {
			fx := newFixture(t, f)
			res := fx.succeed(t, fx.request("summarise the diff\nsecond line", ""))
			if res.Text != "ok: summarise the diff" {
				t.Errorf("Text = %q, want the fake's default reply", res.Text)
			}
			if res.SessionID == "" {
				t.Error("SessionID is empty; a fresh turn must hand back the session the CLI started")
			}
			call := fx.onlyCall(t)
			if call.Flavor != f.name || call.ResumeSession != "" {
				t.Errorf("call = %+v, want a fresh %s call", call, f.name)
			}
			if realPath(t, call.Dir) != realPath(t, fx.dir) {
				t.Errorf("CLI ran in %s, want %s", call.Dir, fx.dir)
			}
		})
	}
}

func TestRunReturnsScriptedReply(t *testing.T) {
	const sentinel = "DONE: all checks passed\n\n```go\nfmt.Println(\"é\")\n```"
	onEachCLI(t, func(t *testing.T, fx fixture) {
		fx.script.SetReply(sentinel)
		if res := fx.succeed(t, fx.request("go", "")); res.Text != sentinel {
			t.Errorf("Text = %q, want %q", res.Text, sentinel)
		}
	})
}

func TestRunResumesTheGivenSession(t *testing.T) {
	onEachCLI(t, func(t *testing.T, fx fixture) {
		first := fx.succeed(t, fx.request("one", ""))
		second := fx.succeed(t, fx.request("two", first.SessionID))

		calls := fx.script.Calls()
		if len(calls) != 2 || calls[1].ResumeSession != first.SessionID {
			t.Fatalf("calls = %+v, want the second to resume %s", calls, first.SessionID)
		}
		if second.SessionID != first.SessionID {
			t.Errorf("SessionID = %q after resume, want %q", second.SessionID, first.SessionID)
		}
	})
}

func TestStaleSessionIsClassifiedAndNotReturned(t *testing.T) {
	onEachCLI(t, func(t *testing.T, fx fixture) {
		old := fx.succeed(t, fx.request("one", "")).SessionID
		fx.script.Expire(old)

		res, err := fx.run(t, fx.request("two", old))
		if got := ClassOf(err); got != db.ClassStaleSession {
			t.Fatalf("ClassOf = %q, want %q (err: %v)", got, db.ClassStaleSession, err)
		}
		var ae *Error
		if !errors.As(err, &ae) {
			t.Fatalf("err is %T, want *Error", err)
		}
		if ae.SessionID != "" || res.SessionID != "" {
			t.Errorf("stale turn handed back session %q / %q; it must hand back none", ae.SessionID, res.SessionID)
		}
		if !strings.Contains(ae.Msg, "fresh session") {
			t.Errorf("Msg = %q, want it to say a fresh session is needed", ae.Msg)
		}
	})
}

func TestFailuresAreClassified(t *testing.T) {
	tests := []struct {
		kind string
		want db.ErrorClass
		msg  string // what the chat message must mention
	}{
		{"rate_limit", db.ClassTransient, "temporarily unavailable"},
		{"not_logged_in", db.ClassInfra, "logged in"},
		{"crash", db.ClassPermanent, "simulated crash"},
	}
	for _, f := range flavors {
		for _, tt := range tests {
			t.Run(f.name+"/"+tt.kind, func(t *testing.T) {
				fx := newFixture(t, f)
				fx.script.FailNext(tt.kind, 1)
				_, err := fx.run(t, fx.request("work", ""))
				var ae *Error
				if !errors.As(err, &ae) || ae.Class != tt.want {
					t.Fatalf("err = %v (class %q), want class %q", err, ClassOf(err), tt.want)
				}
				if !strings.Contains(ae.Msg, tt.msg) {
					t.Errorf("Msg = %q, want it to mention %q", ae.Msg, tt.msg)
				}
				// The failure was consumed: the next turn succeeds.
				fx.succeed(t, fx.request("again", ""))
			})
		}
	}
}

func TestTransientFailureKeepsTheSession(t *testing.T) {
	onEachCLI(t, func(t *testing.T, fx fixture) {
		id := fx.succeed(t, fx.request("one", "")).SessionID
		fx.script.FailNext("rate_limit", 1)
		_, err := fx.run(t, fx.request("two", id))
		var ae *Error
		if !errors.As(err, &ae) || ae.Class != db.ClassTransient || ae.SessionID != id {
			t.Fatalf("err = %#v, want a transient error still carrying session %s", err, id)
		}
	})
}

func TestMissingBinaryIsInfrastructure(t *testing.T) {
	bins := map[string]string{
		"absolute path": filepath.Join(t.TempDir(), "no-such-cli"),
		"not on PATH":   "threadflow-no-such-cli",
	}
	for _, f := range flavors {
		for name, bin := range bins {
			t.Run(f.name+"/"+name, func(t *testing.T) {
				p := f.make(bin, zap.NewNop())
				_, err := p.Run(context.Background(), Request{Prompt: "hi"})
				var ae *Error
				if !errors.As(err, &ae) || ae.Class != db.ClassInfra {
					t.Fatalf("err = %v, want an infrastructure *Error", err)
				}
				if !errors.Is(err, exec.ErrNotFound) && !errors.Is(err, fs.ErrNotExist) {
					t.Errorf("err = %v, want it to wrap the not-found cause", err)
				}
				if !strings.Contains(ae.Msg, f.envVar) {
					t.Errorf("Msg = %q, want it to point at %s", ae.Msg, f.envVar)
				}
			})
		}
	}
}

func TestUnexecutableBinaryIsInfrastructure(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "claude")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, f := range flavors {
		t.Run(f.name, func(t *testing.T) {
			_, err := f.make(bin, zap.NewNop()).Run(context.Background(), Request{Prompt: "hi"})
			var ae *Error
			if !errors.As(err, &ae) || ae.Class != db.ClassInfra || !strings.Contains(ae.Msg, "permission denied") {
				t.Fatalf("err = %v, want an infrastructure error saying permission denied", err)
			}
		})
	}
}

func TestConcurrentTurnsGetTheirOwnSessions(t *testing.T) {
	const turns = 6
	onEachCLI(t, func(t *testing.T, fx fixture) {
		fx.script.FailNext("rate_limit", 2)
		results := make(chan error, turns)
		sessions := make(chan string, turns)
		for i := range turns {
			go func() {
				res, err := fx.run(t, fx.request(fmt.Sprintf("turn %d", i), ""))
				sessions <- res.SessionID
				results <- err
			}()
		}
		transient, seen := 0, map[string]bool{}
		for range turns {
			if err := <-results; ClassOf(err) == db.ClassTransient {
				transient++
			} else if err != nil {
				t.Errorf("unexpected error: %v", err)
			}
			if id := <-sessions; id != "" {
				seen[id] = true
			}
		}
		// Each scripted failure is consumed by exactly one process, and every success is its own session.
		if transient != 2 || len(seen) != turns-2 || len(fx.script.Calls()) != turns {
			t.Errorf("transient = %d, distinct sessions = %d, calls = %d; want 2, %d, %d",
				transient, len(seen), len(fx.script.Calls()), turns-2, turns)
		}
	})
}

func TestMissingWorkdirIsInfrastructure(t *testing.T) {
	for _, f := range flavors {
		fx := newFixture(t, f)
		file := filepath.Join(fx.dir, "file")
		if err := os.WriteFile(file, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		for name, dir := range map[string]string{"gone": filepath.Join(fx.dir, "gone"), "a file": file} {
			t.Run(f.name+"/"+name, func(t *testing.T) {
				r := fx.request("hi", "")
				r.Dir = dir
				_, err := fx.run(t, r)
				var ae *Error
				if !errors.As(err, &ae) || ae.Class != db.ClassInfra || !strings.Contains(ae.Msg, dir) {
					t.Fatalf("err = %v, want an infrastructure error naming %s", err, dir)
				}
				if calls := fx.script.Calls(); len(calls) != 0 {
					t.Errorf("CLI ran %d times; it must not start without its directory", len(calls))
				}
			})
		}
	}
}

func TestRejectsArgumentsThatCouldBecomeFlags(t *testing.T) {
	tests := []struct {
		name  string
		model string
		sess  string
		want  db.ErrorClass
	}{
		{"model that is a flag", "--dangerously-skip-permissions", "", db.ClassPermanent},
		{"model with a space", "sonnet --resume x", "", db.ClassPermanent},
		{"session that is a flag", "", "--help", db.ClassStaleSession},
		{"session with a newline", "", "abc\ndef", db.ClassStaleSession},
		{"model longer than 200 characters", strings.Repeat("m", maxArgLen+1), "", db.ClassPermanent},
		{"session longer than 200 characters", "", strings.Repeat("s", maxArgLen+1), db.ClassStaleSession},
	}
	for _, f := range flavors {
		for _, tt := range tests {
			t.Run(f.name+"/"+tt.name, func(t *testing.T) {
				fx := newFixture(t, f)
				r := fx.request("hi", tt.sess)
				r.Model = tt.model
				_, err := fx.run(t, r)
				if got := ClassOf(err); got != tt.want {
					t.Fatalf("ClassOf = %q, want %q (err: %v)", got, tt.want, err)
				}
				if calls := fx.script.Calls(); len(calls) != 0 {
					t.Errorf("CLI ran with %+v; it must not start", calls)
				}
			})
		}
	}
}

func TestModelIsPassed(t *testing.T) {
	onEachCLI(t, func(t *testing.T, fx fixture) {
		r := fx.request("hi", "")
		r.Model = "gpt-5.3-codex"
		fx.succeed(t, r)
		args := fx.onlyCall(t).Args
		if i := slices.Index(args, "--model"); i < 0 || i+1 >= len(args) || args[i+1] != r.Model {
			t.Errorf("args = %q, want --model %s", args, r.Model)
		}
	})
}

func TestHostilePromptReachesCLIUnchanged(t *testing.T) {
	var big strings.Builder
	for i := range 20000 {
		fmt.Fprintf(&big, "line %d of a large hostile-marker prompt with 'quotes' and $VARS\n", i)
	}
	prompts := map[string]string{
		"flags":        "--resume evil-session\n-p --model x\n--",
		"leading dash": "-",
		"shell":        "hostile-marker $(touch /tmp/pwned) `id`; rm -rf ~ && echo \"'\\",
		"bytes":        "hostile-marker\x00nul\xff\xfe invalid utf-8\r\nCRLF\ttab \u202e rtl",
		"empty":        "",
		"large":        big.String(),
	}
	for _, f := range flavors {
		for name, prompt := range prompts {
			t.Run(f.name+"/"+name, func(t *testing.T) {
				core, logs := observer.New(zapcore.DebugLevel)
				fx := newFixture(t, f)
				fx.p = f.make(agenttest.BuildFakeCLI(t), zap.New(core))
				fx.succeed(t, fx.request(prompt, ""))
				if got := fx.onlyCall(t).Prompt; got != prompt {
					t.Errorf("CLI read a prompt of %d bytes, want the %d bytes sent unchanged", len(got), len(prompt))
				}
				for _, e := range logs.All() {
					if line := fmt.Sprint(e.Message, e.ContextMap()); strings.Contains(line, "hostile-marker") {
						t.Errorf("log entry contains prompt text: %s", line)
					}
				}
			})
		}
	}
}

func TestCancelKillsTheProcessGroup(t *testing.T) {
	onEachCLI(t, func(t *testing.T, fx fixture) {
		fx.script.FailNext("hang", 1)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		done := make(chan error, 1)
		go func() {
			_, err := fx.p.Run(ctx, fx.request("wait forever", ""))
			done <- err
		}()
		// The fake records its own pid and its helpers' once all are running; one helper is in a
		// session of its own, out of reach of the process group.
		testkit.Eventually(t, "the fake to hang", func() bool { return len(fx.script.Hung()) == 3 })
		cancel()

		var err error
		testkit.Eventually(t, "Run to return", func() bool {
			select {
			case err = <-done:
				return true
			default:
				return false
			}
		})
		if !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want it to wrap context.Canceled", err)
		}
		for _, pid := range fx.script.Hung() {
			testkit.Eventually(t, fmt.Sprintf("pid %d to die", pid), func() bool { return !agenttest.Alive(pid) })
		}
	})
}

// A CLI that prints nothing for AGENT_IDLE_TIMEOUT, or is still running after AGENT_TIMEOUT, is
// stopped with everything it started, and the turn says why.
func TestTurnLimitsKillEveryProcessOfTheTurn(t *testing.T) {
	limits := []struct {
		name string
		cfg  Config
		idle time.Duration // the request's own idle limit (an Archon node's idle_timeout)
		want []string      // in the error's message
	}{
		{"idle", Config{IdleTimeout: 500 * time.Millisecond}, 0, []string{"printed nothing for 500ms", IdleTimeoutEnv}},
		{"node idle", Config{IdleTimeout: time.Hour}, 500 * time.Millisecond, []string{"printed nothing for 500ms"}},
		{"timeout", Config{Timeout: 500 * time.Millisecond}, 0, []string{"took longer than 500ms (" + TimeoutEnv + ")"}},
	}
	for _, limit := range limits {
		for _, f := range flavors {
			t.Run(limit.name+"/"+f.name, func(t *testing.T) {
				fx := newFixture(t, f)
				setConfig(fx.p, limit.cfg)
				fx.script.FailNext("hang", 1)
				r := fx.request("wait forever", "")
				r.IdleTimeout = limit.idle
				_, err := fx.run(t, r)
				var ae *Error
				if !errors.As(err, &ae) || ae.Class != db.ClassTransient {
					t.Fatalf("err = %v, want a transient error", err)
				}
				for _, w := range limit.want {
					if !strings.Contains(ae.Msg, w) {
						t.Errorf("err = %v, want it to say %q", err, w)
					}
				}
				pids := fx.script.Hung()
				if len(pids) != 3 {
					t.Fatalf("hung pids = %v, want the fake and its two helpers", pids)
				}
				for _, pid := range pids { // SIGKILL was sent before Run returned; dying takes a moment
					testkit.Eventually(t, fmt.Sprintf("pid %d to die", pid), func() bool { return !agenttest.Alive(pid) })
				}
			})
		}
	}
}

func TestPermissionsReachTheCLI(t *testing.T) {
	want := map[string]map[Permissions][]string{
		NameClaude: {
			PermRead: {"--permission-mode", "dontAsk"},
			PermEdit: {"--permission-mode", "acceptEdits"},
			PermFull: {"--permission-mode", "bypassPermissions"},
		},
		NameCodex: {
			PermRead: {"--sandbox", "read-only"},
			PermEdit: {"--sandbox", "workspace-write"},
			PermFull: {"--sandbox", "danger-full-access"},
		},
	}
	for _, f := range flavors {
		for _, tt := range []struct {
			cfg  Config
			req  Permissions
			want Permissions
		}{
			{Config{}, "", PermEdit},
			{Config{Permissions: PermRead}, "", PermRead},
			{Config{Permissions: PermRead}, PermEdit, PermEdit},
			{Config{AllowFull: true}, PermFull, PermFull},
		} {
			t.Run(fmt.Sprintf("%s/%s/%s", f.name, tt.cfg.Permissions, tt.req), func(t *testing.T) {
				fx := newFixture(t, f)
				setConfig(fx.p, tt.cfg)
				r := fx.request("hi", "")
				r.Permissions = tt.req
				fx.succeed(t, r)
				args := strings.Join(fx.onlyCall(t).Args, " ")
				if w := strings.Join(want[f.name][tt.want], " "); !strings.Contains(args, w) {
					t.Errorf("args %q do not contain %q", args, w)
				}
				if f.name == NameCodex && !strings.HasPrefix(args, "--ask-for-approval never exec ") {
					t.Errorf("codex args %q: want --ask-for-approval never before exec", args)
				}
			})
		}
	}
}

func TestFullPermissionsNeedTheOperator(t *testing.T) {
	onEachCLI(t, func(t *testing.T, fx fixture) {
		r := fx.request("hi", "")
		r.Permissions = PermFull
		_, err := fx.run(t, r)
		var ae *Error
		if !errors.As(err, &ae) || ae.Class != db.ClassInfra || !strings.Contains(ae.Hint, AllowFullEnv+"=true") {
			t.Fatalf("err = %v, want an infrastructure error whose hint names %s", err, AllowFullEnv)
		}
		if calls := fx.script.Calls(); len(calls) != 0 {
			t.Errorf("the CLI was started %d times; want never", len(calls))
		}
	})
}

// The CLI never sees the bot's database settings or chat tokens, even if they are still set.
func TestSecretsDoNotReachTheCLI(t *testing.T) {
	t.Setenv("PGPASSWORD", "pg-secret")
	t.Setenv("SLACK_BOT_TOKEN", "xoxb-secret")
	t.Setenv("DATABASE_URL", "postgres://u:secret@h/db")
	onEachCLI(t, func(t *testing.T, fx fixture) {
		fx.script.SetReply("$ENV")
		res := fx.succeed(t, fx.request("hi", ""))
		for _, secret := range []string{"pg-secret", "xoxb-secret", "u:secret"} {
			if strings.Contains(res.Text, secret) {
				t.Errorf("the CLI's environment holds %q", secret)
			}
		}
		if !strings.Contains(res.Text, "THREADFLOW_AGENT_TURN=") {
			t.Errorf("the CLI's environment lacks the turn tag: %.300s", res.Text)
		}
	})
}

func setConfig(p Provider, c Config) {
	switch p := p.(type) {
	case *Claude:
		p.Config = c
	case *Codex:
		p.Config = c
	}
}

func TestNew(t *testing.T) {
	env := map[string]string{claudeBinEnv: "/opt/claude", codexBinEnv: "/opt/codex"}
	tests := []struct {
		name    string
		env     func(string) string
		wantBin string
		wantErr bool
	}{
		{NameClaude, nil, "", false},
		{NameCodex, nil, "", false},
		{NameClaude, func(k string) string { return env[k] }, "/opt/claude", false},
		{NameCodex, func(k string) string { return env[k] }, "/opt/codex", false},
		{"Claude", nil, "", true},
		{"gpt", nil, "", true},
		{"", nil, "", true},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprintf("%q/env=%v", tt.name, tt.env != nil), func(t *testing.T) {
			p, err := New(tt.name, tt.env, nil)
			if tt.wantErr {
				if !errors.Is(err, ErrUnknownProvider) || !strings.Contains(err.Error(), "claude, codex") {
					t.Fatalf("err = %v, want ErrUnknownProvider listing claude, codex", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if p.Name() != tt.name {
				t.Errorf("Name = %q, want %q", p.Name(), tt.name)
			}
			var bin string
			switch p := p.(type) {
			case *Claude:
				bin = p.Bin
			case *Codex:
				bin = p.Bin
			}
			if bin != tt.wantBin {
				t.Errorf("Bin = %q, want %q", bin, tt.wantBin)
			}
		})
	}
}
