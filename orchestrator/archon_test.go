package orchestrator_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"threadflow/db"
	"threadflow/orchestrator/execution"
	"threadflow/testkit"
	"threadflow/workflow"
)

// archonFixture is Archon pinned at 3d9af974 (test/testdata/archon/README.md).
const archonFixture = "../test/testdata/archon/.archon/workflows"

// archonCatalogs reads the harness's workflows and an Archon repository's .archon/workflows.
type archonCatalogs struct {
	t               testing.TB
	home, dir, repo string
}

func (c archonCatalogs) Catalog() *workflow.Catalog {
	cat, errs := workflow.Discover(c.home, []string{c.dir, filepath.Join(c.repo, ".archon", "workflows")})
	if len(errs) > 0 {
		c.t.Errorf("test workflows do not parse:\n%v", errs)
	}
	return cat
}

// withArchon gives the harness an Archon repository holding files (paths below .archon) and
// restarts it, and returns the repository's root.
func (h *harness) withArchon(files map[string]string) string {
	h.t.Helper()
	root := h.t.TempDir()
	for rel, content := range files {
		p := filepath.Join(root, ".archon", filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			h.t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			h.t.Fatal(err)
		}
	}
	h.cfg.Catalogs = archonCatalogs{t: h.t, home: h.home, dir: h.wfDir, repo: root}
	h.restart()
	return root
}

// fixture reads a workflow file of the pinned Archon fixture.
func fixture(t *testing.T, rel string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(archonFixture, rel))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Archon's e2e-joins ends completed, as its header says: joins over a skipped branch, a loop_group
// that ends on until_bash after three ticks, `always_run` (which changes nothing in a run that is
// not resumed: TestArchonAlwaysRunNodeRunsAgainOnResume) and the typed output sidecar of `seed`.
func TestArchonJoinsWorkflowCompletesAsItsHeaderSays(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		h.withArchon(map[string]string{"workflows/e2e-joins.yaml": fixture(t, "test-workflows/e2e-joins.yaml")})
		run := h.waitStatus(h.startRun("e2e-joins", "").ID, db.StatusCompleted)
		if got := nodeOutput(t, h.events(run.ID), "verify"); got != "ALL JOINS OK (loop ran 3 iterations)" {
			t.Errorf("verify said %q", got)
		}
		if got := nodeOutput(t, h.events(run.ID), "countdown"); got != "3" {
			t.Errorf("the loop_group's output is %q, want its last body output 3", got)
		}
		dir := filepath.Join(execution.ArtifactsDir(run), "nodes")
		if b, err := os.ReadFile(filepath.Join(dir, "seed.md")); err != nil || string(b) != "seed-ok\n" {
			t.Errorf("nodes/seed.md = %q, %v", b, err)
		}
		var meta struct {
			OutputType string `json:"output_type"`
			RunID      string `json:"run_id"`
		}
		b, err := os.ReadFile(filepath.Join(dir, "seed.meta.json"))
		if err != nil || json.Unmarshal(b, &meta) != nil || meta.OutputType != "probe-seed" || meta.RunID != run.ID {
			t.Errorf("nodes/seed.meta.json = %s, %v", b, err)
		}
	})
}

// nodeOutput is the inline output a node completed with, trimmed.
func nodeOutput(t *testing.T, events []db.Event, node string) string {
	t.Helper()
	for _, e := range events {
		if e.Type == db.EventNodeCompleted && e.NodeID == node {
			return strings.TrimSpace(db.Decode[db.NodeCompletedData](e).Output)
		}
	}
	t.Fatalf("node %s did not complete", node)
	return ""
}

// Archon's e2e-worktree-disabled works in the live checkout: without REPO_PATH the run stops
// saying so; once REPO_PATH is set, a resume completes in it, its outputs still in the run's
// own directory.
func TestArchonWorktreeDisabledWorksInTheLiveCheckout(t *testing.T) {
	eachEngineSerial(t, func(t *testing.T, h *harness) {
		h.withArchon(map[string]string{"workflows/e2e-worktree-disabled.yaml": fixture(t, "test-workflows/e2e-worktree-disabled.yaml")})
		run := h.waitStatus(h.startRun("e2e-worktree-disabled", "").ID, db.StatusFailed, db.StatusPaused)
		if e := run.Meta.LastError; e == nil || !strings.Contains(e.Message, "REPO_PATH is not set") {
			t.Fatalf("last error = %+v, want it to say REPO_PATH is not set", run.Meta.LastError)
		}
		repo := newRepo(t, false)
		h.cfg.Dirs.RepoPath = repo
		h.restart()
		h.say(admin, "", "/workflow resume "+run.ID)
		run = h.waitStatus(run.ID, db.StatusCompleted)
		real, err := filepath.EvalSymlinks(repo)
		if err != nil {
			t.Fatal(err)
		}
		if got := nodeOutput(t, h.events(run.ID), "print-cwd"); got != real {
			t.Errorf("print-cwd = %q, want the live checkout %s", got, real)
		}
		if !strings.Contains(nodeOutput(t, h.events(run.ID), "assert-live-checkout"), "PASS") {
			t.Error("assert-live-checkout did not pass")
		}
		if _, err := os.Stat(filepath.Join(filepath.Dir(run.WorkingPath), "outputs")); err != nil {
			t.Errorf("the run's outputs are not in its own directory: %v", err)
		}
	})
}

// An Archon loop ends when until_bash exits 0; its AI turns get the node's idle_timeout, effort,
// tool lists and hooks as the CLI's flags; Archon's bash nodes run with bash.
func TestArchonLoopEndsOnUntilBashAndAgentFieldsReachTheCLI(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		h.withArchon(map[string]string{"workflows/loop.yaml": `name: archon-loop
description: loops until a check passes
provider: claude
effort: high
nodes:
  - id: shell
    bash: 'echo "${BASH_VERSION:+bash}"'
  - id: work
    depends_on: [shell]
    idle_timeout: 60000
    allowed_tools: [Read, Grep]
    denied_tools: [Bash]
    hooks:
      PostToolUse:
        - matcher: Read
          response:
            systemMessage: "checked"
    loop:
      prompt: "work on it ($shell.output)"
      until_bash: 'n=$(( $(cat count 2>/dev/null || echo 0) + 1 )); echo $n > count; test $n -ge 3'
      max_iterations: 5
`})
		run := h.waitStatus(h.startRun("archon-loop", "").ID, db.StatusCompleted)
		if got := nodeOutput(t, h.events(run.ID), "shell"); got != "bash" {
			t.Errorf("the bash node said %q: it did not run with bash", got)
		}
		iterations := 0
		for _, e := range h.events(run.ID) {
			if e.Type == db.EventLoopIteration {
				iterations++
			}
		}
		calls := h.script.Calls()
		if iterations != 3 || len(calls) != 3 {
			t.Fatalf("%d iterations, %d turns; want 3 of each (until_bash passes on its third run)", iterations, len(calls))
		}
		args := strings.Join(calls[0].Args, " ")
		for _, want := range []string{"--effort high", "--tools Read,Grep", "--disallowedTools Bash", `--settings {"hooks":{"PostToolUse":[{"matcher":"Read"`} {
			if !strings.Contains(args, want) {
				t.Errorf("the CLI was started with %q, without %q", args, want)
			}
		}
		if !slices.Contains(calls[0].Args, "--permission-mode") {
			t.Errorf("the permissions level's own flags are gone: %q", args)
		}
	})
}

// Archon's e2e-echo-child echoes its arguments, and fails on purpose for fail-<n>, as its header
// says (it is the child the fan-out workflows start).
func TestArchonEchoChildEndsAsItsHeaderSays(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		h.withArchon(map[string]string{"workflows/test-workflows/e2e-echo-child.yaml": fixture(t, "test-workflows/e2e-echo-child.yaml")})
		ok := h.waitStatus(h.startRun("e2e-echo-child", "alpha").ID, db.StatusCompleted)
		if got := nodeOutput(t, h.events(ok.ID), "echo"); got != "child-ok: alpha" {
			t.Errorf("echo said %q", got)
		}
		failed := h.waitStatus(h.startRun("e2e-echo-child", "fail-2").ID, db.StatusFailed)
		if e := failed.Meta.LastError; e == nil || e.Node != "echo" {
			t.Errorf("last error = %+v, want the echo node", failed.Meta.LastError)
		}
	})
}

// Archon's e2e-deterministic ends completed, as its header says: bash and script nodes (bun, and uv
// run with python3 since it declares no packages), output substitution, JSON field access, joins.
func TestArchonDeterministicWorkflowCompletesAsItsHeaderSays(t *testing.T) {
	for _, tool := range []string{"bun", "python3"} {
		testkit.Tool(t, tool)
	}
	eachEngine(t, func(t *testing.T, h *harness) {
		h.cfg.LookPath = testkit.LookPath // bun as .ci/run installs it, beside the AI CLIs
		h.withArchon(map[string]string{
			"workflows/e2e-deterministic.yaml": fixture(t, "test-workflows/e2e-deterministic.yaml"),
			"scripts/echo-args.js":             fixture(t, "../scripts/echo-args.js"),
			"scripts/echo-py.py":               fixture(t, "../scripts/echo-py.py"),
		})
		run := h.waitStatus(h.startRun("e2e-deterministic", "hello").ID, db.StatusCompleted, db.StatusFailed)
		if run.Status != db.StatusCompleted {
			t.Fatalf("e2e-deterministic %s: %+v", run.Status, run.Meta.LastError)
		}
	})
}

// Archon's field reads are strict: a key a bash node's JSON lacks fails the reader, naming it,
// where Threadflow's own files would read it as empty.
func TestArchonFieldReadOfAMissingKeyFailsTheReader(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		h.withArchon(map[string]string{"workflows/strict.yaml": `name: strict
description: reads a key the JSON lacks
nodes:
  - id: emit
    bash: echo '{"status":"ok"}'
  - id: read
    depends_on: [emit]
    bash: 'echo "count is $emit.output.count"'
`})
		run := h.waitStatus(h.startRun("strict", "").ID, db.StatusFailed)
		if e := run.Meta.LastError; e == nil || e.Node != "read" || !strings.Contains(e.Message, "reads $emit.output.count, but the output of emit has no field count") {
			t.Errorf("last error = %+v", run.Meta.LastError)
		}
	})
}
