package orchestrator_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"threadflow/agent"
	"threadflow/agent/agenttest"
	"threadflow/conversation"
	"threadflow/db"
	"threadflow/db/dbtest"
	"threadflow/orchestrator"
	"threadflow/orchestrator/dispatch"
	"threadflow/orchestrator/execution"
	"threadflow/orchestratortest"
	"threadflow/testkit"
	"threadflow/workflow"
)

// harness is the real orchestrator wiring (store, workers, executor, dispatcher, reporter) on a real
// database, real shell processes and the fake agent CLI, with a recording Outbox standing in for a
// chat platform. It is named console because user ids on gates must name a real platform, but
// unlike a terminal it has threads and buttons, as Slack and Discord do.
type harness struct {
	t         *testing.T
	store     db.Store
	engine    *orchestratortest.Engine
	out       *orchestratortest.Outbox
	home      string
	wfDir     string
	script    *agenttest.Script
	providers fakeProviders
	cfg       orchestrator.Config
}

type opener func(t testing.TB, opts db.Options) db.Store

// engines runs f on SQLite and on PostgreSQL.
func engines(t *testing.T, f func(t *testing.T, open opener)) {
	dbtest.ForEachEngine(t, func(t *testing.T, open func(t testing.TB, opts db.Options) db.Store) { f(t, open) })
}

// eachEngine runs f, in parallel with other tests, on SQLite and on PostgreSQL, each time with a
// fresh harness: the start of most tests here.
func eachEngine(t *testing.T, f func(t *testing.T, h *harness)) {
	t.Parallel()
	eachEngineSerial(t, f)
}

// eachEngineSerial is eachEngine for a test that does not run in parallel with the others, as one
// that sets the process's environment must not.
func eachEngineSerial(t *testing.T, f func(t *testing.T, h *harness)) {
	engines(t, func(t *testing.T, open opener) { f(t, newHarness(t, open)) })
}

func newHarness(t *testing.T, open opener) *harness {
	t.Helper()
	home := t.TempDir()
	h := &harness{t: t, store: open(t, db.Options{}), out: &orchestratortest.Outbox{}, home: home, wfDir: filepath.Join(home, "wf"),
		script: agenttest.NewScript(t)}
	h.providers = newFakeProviders(agenttest.BuildFakeCLI(t), h.script.Env())
	if err := os.MkdirAll(h.wfDir, 0o755); err != nil {
		t.Fatal(err)
	}
	h.cfg = orchestrator.Config{
		Store:         h.store,
		Catalogs:      catalogs{t: t, home: home, dir: h.wfDir},
		Providers:     h.providers,
		Outboxes:      map[string]conversation.Outbox{"console": h.out},
		Auth:          dispatch.NewAuth(nil, []string{admin, ops}),
		Dirs:          execution.Dirs{Home: home},
		Log:           zaptest.NewLogger(t),
		Owner:         "test-replica",
		LeaseTTL:      10 * time.Second,
		MaxRecoveries: 3,
		Poll:          50 * time.Millisecond,
		Debounce:      10 * time.Millisecond,
	}
	h.start()
	t.Cleanup(h.shutdown)
	return h
}

// start runs a fresh engine (as a restarted process would) on the same database.
func (h *harness) start() {
	h.engine = orchestratortest.Start(h.t, h.cfg)
}

// shutdown stops the engine and waits for it.
func (h *harness) shutdown() {
	h.engine.Stop()
}

func (h *harness) restart() {
	h.shutdown()
	h.start()
}

func (h *harness) writeWorkflow(name, src string) {
	h.t.Helper()
	if err := os.WriteFile(filepath.Join(h.wfDir, name+".yaml"), []byte(src), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

// say sends text as user in the test channel (or a thread of it) and returns the replies orchestratortest.Posted
// while it was handled.
func (h *harness) say(user, thread, text string) []orchestratortest.Posted {
	h.t.Helper()
	before := h.out.Count()
	m := conversation.Message{Address: conversation.Address{Platform: "console", ChannelID: "chan", ThreadID: thread},
		UserID: user, Text: text, Direct: true}
	h.engine.Dispatcher.Handle(context.Background(), m)
	h.delivered()
	return h.out.Since(before)
}

// delivered waits until the courier delivered every message the runs owe: what handling a message
// owed is posted a moment after it is handled. With the engine stopped, the messages wait for the
// next one.
func (h *harness) delivered() {
	h.t.Helper()
	if !h.engine.Running() {
		return
	}
	h.waitFor("every owed message to be delivered", func() bool {
		runs, err := h.store.ListRuns(context.Background(), db.RunFilter{})
		if err != nil {
			h.t.Fatal(err)
		}
		for _, r := range runs {
			u, err := h.store.Undelivered(context.Background(), r.ID)
			if err != nil {
				h.t.Fatal(err)
			}
			if len(u) > 0 {
				return false
			}
		}
		return true
	})
}

// runIn returns the single run the store has for a workflow, failing when there is not exactly one.
func (h *harness) runs(workflow string) []db.Run {
	h.t.Helper()
	runs, err := h.store.ListRuns(context.Background(), db.RunFilter{Workflow: workflow})
	if err != nil {
		h.t.Fatal(err)
	}
	return runs
}

// waitStatus waits until the run reaches one of the statuses.
func (h *harness) waitStatus(id string, want ...db.Status) db.Run {
	h.t.Helper()
	var run db.Run
	h.waitFor(fmt.Sprintf("run %s to be %v", id, want), func() bool {
		var err error
		run, err = h.store.GetRun(context.Background(), id)
		if err != nil {
			h.t.Fatal(err)
		}
		for _, s := range want {
			if run.Status == s {
				return true
			}
		}
		return false
	})
	return run
}

// waitCompleted waits until the run ended, failing unless it completed (with its last error).
func (h *harness) waitCompleted(id string) db.Run {
	h.t.Helper()
	run := h.waitStatus(id, db.StatusCompleted, db.StatusFailed)
	if run.Status != db.StatusCompleted {
		h.t.Fatalf("run %s is %s, want completed: %+v", id, run.Status, run.Meta.LastError)
	}
	return run
}

func (h *harness) waitFor(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(testkit.Deadline)
	for !cond() {
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out waiting for %s; messages:\n%s", what, h.out.Dump())
		}
		time.Sleep(5 * time.Millisecond) // polling interval of a condition wait, not a wait for work
	}
}

// waitMessage waits until a message containing text was sent (notices follow the store write
// they report, so a run can be paused a moment before its gate message is out).
func (h *harness) waitMessage(text string) []orchestratortest.Posted {
	h.t.Helper()
	var found []orchestratortest.Posted
	h.waitFor(fmt.Sprintf("a message containing %q", text), func() bool {
		found = h.out.Find(text)
		return len(found) > 0
	})
	return found
}

func (h *harness) events(id string) []db.Event {
	h.t.Helper()
	ev, err := h.store.Events(context.Background(), id)
	if err != nil {
		h.t.Fatal(err)
	}
	return ev
}

// catalogs discovers workflows on every call; a test workflow that does not parse fails the test.
type catalogs struct {
	t         testing.TB
	home, dir string
}

func (c catalogs) Catalog() *workflow.Catalog {
	cat, errs := workflow.Discover(c.home, []string{c.dir})
	if len(errs) > 0 {
		c.t.Errorf("test workflows do not parse:\n%v", errs)
	}
	return cat
}

// fakeProviders gives the real Claude provider pointed at the fake CLI. The binary path can be
// switched, to play a provider that is missing and later installed.
type fakeProviders struct {
	bin *atomic.Pointer[string]
	cfg *atomic.Pointer[agent.Config] // the operator's agent settings (AGENT_*)
	env []string
}

func newFakeProviders(bin string, env []string) fakeProviders {
	p := fakeProviders{bin: &atomic.Pointer[string]{}, cfg: &atomic.Pointer[agent.Config]{}, env: env}
	p.bin.Store(&bin)
	p.cfg.Store(&agent.Config{})
	return p
}

func (f fakeProviders) Provider(name string) (execution.Provider, error) {
	return envProvider{p: &agent.Claude{Bin: *f.bin.Load(), Config: *f.cfg.Load()}, env: f.env}, nil
}

// envProvider adds the fake's state directory to each request.
type envProvider struct {
	p   agent.Provider
	env []string
}

func (e envProvider) Name() string { return e.p.Name() }
func (e envProvider) Run(ctx context.Context, r agent.Request) (agent.Result, error) {
	r.Env = append(r.Env, e.env...)
	return e.p.Run(ctx, r)
}

func joined(ps []orchestratortest.Posted) string {
	var b strings.Builder
	for _, p := range ps {
		b.WriteString(p.Text + "\n")
	}
	return b.String()
}
