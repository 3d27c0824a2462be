// Package agenttest provides a fake coding-agent CLI for tests of the agent package, the
// orchestrator and end-to-end runs. The fake is a real binary that speaks both Claude Code's
// stream-json and Codex's exec --json formats; a Script steers it through a state directory and
// reads back every invocation.
//
//	bin := agenttest.BuildFakeCLI(t)
//	s := agenttest.NewScript(t)
//	p := &agent.Claude{Bin: bin}
//	res, err := p.Run(ctx, agent.Request{Prompt: "hi", Env: s.Env()})
package agenttest

import (
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"

	"threadflow/agent/agenttest/internal/fakestate"
)

const fakePackage = "threadflow/agent/agenttest/fakecli"

// The fake is built once per test binary: every test shares it, and building is the slow part.
var build struct {
	once sync.Once
	path string
	err  error
	out  []byte
}

// BuildFakeCLI builds the fake CLI once per test binary, into a temporary directory kept for the
// life of the process, and returns the binary's path.
func BuildFakeCLI(t testing.TB) string {
	t.Helper()
	build.once.Do(func() {
		dir, err := os.MkdirTemp("", "threadflow-fakecli-")
		if err != nil {
			build.err = err
			return
		}
		build.path = filepath.Join(dir, "fakecli")
		cmd := exec.Command("go", "build", "-o", build.path, fakePackage)
		build.out, build.err = cmd.CombinedOutput()
	})
	if build.err != nil {
		t.Fatalf("build fake agent CLI: %v\n%s", build.err, build.out)
	}
	return build.path
}

// Call is one invocation of the fake.
type Call struct {
	Flavor        string // claude or codex
	Args          []string
	ResumeSession string // "" for a fresh session
	Prompt        string // exactly the bytes read from stdin
	Dir           string // the working directory
}

// Script is the state directory shared by a test and the fake processes it runs.
type Script struct {
	Dir string
	t   testing.TB
}

// NewScript returns a script in a fresh temporary directory.
func NewScript(t testing.TB) *Script {
	t.Helper()
	return &Script{Dir: t.TempDir(), t: t}
}

// Env returns the environment entries that point the fake at this script.
func (s *Script) Env() []string { return []string{fakestate.DirEnv + "=" + s.Dir} }

// Expire makes sessionID stale: resuming it fails the way the real CLI fails.
func (s *Script) Expire(sessionID string) {
	s.t.Helper()
	s.locked(func(d fakestate.Dir) error { return d.Expire(sessionID) })
}

// SetReply sets the reply of the following turns; "" restores the default, "ok: " and the prompt's
// first line, and "$ENV" makes the fake answer with its environment, one KEY=VALUE a line.
func (s *Script) SetReply(text string) {
	s.t.Helper()
	s.locked(func(d fakestate.Dir) error { return d.SetReply(text) })
}

// SetCost makes each following Claude turn report a usage of 10 input and 5 output tokens of
// model agenttest.FakeModel costing raw (JSON: 0.02, or "NaN" to report an absurd figure); ""
// reports no usage, as before.
func (s *Script) SetCost(raw string) {
	s.t.Helper()
	s.locked(func(d fakestate.Dir) error { return d.SetCost(raw) })
}

// FakeModel is the model the fake reports usage for.
const FakeModel = "claude-fake-1"

// FailNext makes the next n calls fail with kind: "rate_limit", "not_logged_in", "crash" (exit
// without a result), or "hang" (block until killed, with a helper child in the same process group
// and another in a session of its own; Hung returns the three pids).
// It replaces failures still pending.
func (s *Script) FailNext(kind string, n int) {
	s.t.Helper()
	s.locked(func(d fakestate.Dir) error { return d.SetFailure(fakestate.Failure{Kind: kind, N: n}) })
}

// Calls returns every invocation so far, in order.
func (s *Script) Calls() []Call {
	s.t.Helper()
	var recs []fakestate.Record
	s.locked(func(d fakestate.Dir) (err error) {
		recs, err = d.Calls()
		return err
	})
	calls := make([]Call, len(recs))
	for i, r := range recs {
		calls[i] = Call{Flavor: r.Flavor, Args: r.Args, ResumeSession: r.ResumeSession, Prompt: string(r.Prompt), Dir: r.Dir}
	}
	return calls
}

// Hung returns the pids of fakes parked by a "hang" failure and of their helper children.
func (s *Script) Hung() []int {
	s.t.Helper()
	var pids []int
	s.locked(func(d fakestate.Dir) (err error) {
		pids, err = d.Hung()
		return err
	})
	return pids
}

func (s *Script) locked(fn func(fakestate.Dir) error) {
	s.t.Helper()
	d := fakestate.Dir(s.Dir)
	if err := d.Locked(func() error { return fn(d) }); err != nil {
		s.t.Fatalf("fake agent script %s: %v", s.Dir, err)
	}
}
