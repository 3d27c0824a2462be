// Package orchestratortest builds real orchestrators for tests of several packages (orchestrator,
// metrics, the web adapter, the end-to-end tests), so the wiring is written once: a workflow
// catalog read from a folder as the bot reads it, no AI providers, and an engine that runs until
// the test ends. It is imported by tests only.
package orchestratortest

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"threadflow/orchestrator"
	"threadflow/orchestrator/execution"
	"threadflow/workflow"
)

// Catalog reads workflows as the bot does: the bundled ones, $Home/workflows, then Dir. Files that
// fail validation are left out of the catalog and listed by its Problems, as in production.
type Catalog struct{ Home, Dir string }

// Catalog implements dispatch.Catalogs; it reads the folders again on every call, so a test
// may write a workflow after the engine started.
func (c Catalog) Catalog() *workflow.Catalog {
	var dirs []string
	if c.Dir != "" {
		dirs = []string{c.Dir}
	}
	cat, _ := workflow.Discover(c.Home, dirs) // broken files are recorded in cat (Problems), as in production
	return cat
}

// WriteWorkflows writes each source as dir/<name>, creating dir.
func WriteWorkflows(t testing.TB, dir string, files map[string]string) {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// NoProviders refuses every AI provider, for tests that run shell and approval nodes only.
type NoProviders struct{}

// Provider implements execution.Providers.
func (NoProviders) Provider(string) (execution.Provider, error) {
	return nil, errors.New("no AI provider in this test")
}

// Engine is a running orchestrator.Engine that Stop (or the end of the test) shuts down.
type Engine struct {
	*orchestrator.Engine
	stop    context.CancelFunc
	stopped chan struct{}
}

// Start builds an engine from c and runs it until Stop or the end of the test.
func Start(t testing.TB, c orchestrator.Config) *Engine {
	t.Helper()
	return Run(t, orchestrator.New(c))
}

// Run runs an engine built earlier (when its parts need its Dispatcher before it runs) until Stop
// or the end of the test. Cleanups registered after Run happen before the engine stops.
func Run(t testing.TB, eng *orchestrator.Engine) *Engine {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	e := &Engine{Engine: eng, stop: cancel, stopped: make(chan struct{})}
	go func() { defer close(e.stopped); e.Run(ctx) }()
	t.Cleanup(e.Stop)
	return e
}

// Running reports whether the engine runs (Stop was not called).
func (e *Engine) Running() bool {
	select {
	case <-e.stopped:
		return false
	default:
		return true
	}
}

// Stop shuts the engine down gracefully and waits for it; stopping twice is harmless.
func (e *Engine) Stop() {
	e.stop()
	<-e.stopped
}

// ReleaseWorkflow is the bundled release workflow's shape, the gate tests' workflow: check, a gate
// confirm whose note is captured, and ship, which echoes the note. settings are more of the gate's
// approval settings, one "key: value" each (allow_self_approval: false, approvers: [...]).
func ReleaseWorkflow(settings ...string) string {
	var extra strings.Builder
	for _, s := range settings {
		extra.WriteString("      " + s + "\n")
	}
	return `name: release
nodes:
  - id: check
    bash: echo "checked $ARGUMENTS"
  - id: confirm
    depends_on: [check]
    approval:
      message: Ship $ARGUMENTS?
      capture_response: true
` + extra.String() + `  - id: ship
    depends_on: [confirm]
    bash: echo "shipped $ARGUMENTS with note [$confirm.output]"
`
}
