package agent

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"threadflow/agent/agenttest"
)

// flavor builds one provider around a binary, so every behaviour is tested on both CLIs.
type flavor struct {
	name   string
	envVar string
	make   func(bin string, log *zap.Logger) Provider
}

var flavors = []flavor{
	{NameClaude, claudeBinEnv, func(bin string, log *zap.Logger) Provider { return &Claude{Bin: bin, Log: log} }},
	{NameCodex, codexBinEnv, func(bin string, log *zap.Logger) Provider { return &Codex{Bin: bin, Log: log} }},
}

// onEachCLI runs test once for each CLI, with a fixture of its own.
func onEachCLI(t *testing.T, test func(t *testing.T, fx fixture)) {
	for _, f := range flavors {
		t.Run(f.name, func(t *testing.T) { test(t, newFixture(t, f)) })
	}
}

// fixture is a provider wired to the fake CLI and its script.
type fixture struct {
	p      Provider
	script *agenttest.Script
	dir    string // the turn's working directory
}

func newFixture(t *testing.T, f flavor) fixture {
	t.Helper()
	return fixture{
		p:      f.make(agenttest.BuildFakeCLI(t), zaptest.NewLogger(t)),
		script: agenttest.NewScript(t),
		dir:    t.TempDir(),
	}
}

func (fx fixture) request(prompt, session string) Request {
	return Request{Prompt: prompt, SessionID: session, Dir: fx.dir, Env: fx.script.Env()}
}

// run runs one turn with a context bounded so a broken provider fails the test instead of hanging it.
func (fx fixture) run(t *testing.T, r Request) (Result, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return fx.p.Run(ctx, r)
}

// succeed runs a turn that must succeed and returns its result.
func (fx fixture) succeed(t *testing.T, r Request) Result {
	t.Helper()
	res, err := fx.run(t, r)
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	return res
}

// onlyCall returns the single recorded invocation.
func (fx fixture) onlyCall(t *testing.T) agenttest.Call {
	t.Helper()
	calls := fx.script.Calls()
	if len(calls) != 1 {
		t.Fatalf("got %d CLI calls, want 1: %+v", len(calls), calls)
	}
	return calls[0]
}

func realPath(t *testing.T, p string) string {
	t.Helper()
	r, err := filepath.EvalSymlinks(p)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
