package test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"threadflow/agent/agenttest/stubapi"
)

// Archon workflows whose AI nodes narrow their tools, deny one with a hook, add context with a
// hook and ask for an effort, run through the real bot and the real CLIs against the stub API
// (docs/archon.md): the CLIs accept the flags Threadflow gives them, and the flags do what Archon's
// fields mean.
const archonAIWorkflows = `name: archon-write
description: writes with only Write available and a hook adding context
provider: claude
effort: high
nodes:
  - id: write
    prompt: "Write the file out.txt, then say done."
    allowed_tools: [Write]
    denied_tools: [Bash]
    idle_timeout: 120000
    hooks:
      PostToolUse:
        - matcher: Write
          response:
            hookSpecificOutput:
              hookEventName: PostToolUse
              additionalContext: "ARCHON-HOOK-CONTEXT"
---
name: archon-read-only
description: may not write, Write is not among its tools
provider: claude
nodes:
  - id: write
    prompt: "Write the file out.txt, then say done."
    allowed_tools: [Read]
---
name: archon-hook-deny
description: a hook denies Write
provider: claude
nodes:
  - id: write
    prompt: "Write the file out.txt, then say done."
    hooks:
      PreToolUse:
        - matcher: Write
          response:
            hookSpecificOutput:
              hookEventName: PreToolUse
              permissionDecision: deny
              permissionDecisionReason: "read-only node"
---
name: archon-codex
description: codex with an effort
provider: codex
effort: max
nodes:
  - id: say
    prompt: "Say hello."
`

// archonAIBot is an aiBot whose WORKFLOWS_DIR is an Archon repository's .archon/workflows.
func archonAIBot(t *testing.T, name string) *aiBot {
	t.Helper()
	b := newAIBot(t, name)
	dir := filepath.Join(t.TempDir(), ".archon", "workflows")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for i, src := range strings.Split(archonAIWorkflows, "---\n") {
		file := []string{"write.yaml", "read-only.yaml", "hook-deny.yaml", "codex.yaml"}[i]
		if err := os.WriteFile(filepath.Join(dir, file), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b.env["WORKFLOWS_DIR"] = dir
	return b
}

func TestRealCLIArchonToolsHooksAndEffort(t *testing.T) {
	t.Parallel()
	b := archonAIBot(t, "claude")
	b.api.SetToolFile("out.txt")

	id, out := b.start("archon-write")
	wantIn(t, "archon-write", out, "completed")
	b.wantFile(id)
	if !b.api.Saw("ARCHON-HOOK-CONTEXT") {
		t.Error("the PostToolUse hook's additionalContext never reached the model")
	}

	// Without Write among its tools the agent cannot try it; a hook that denies it stops the try,
	// and the denial fails the node as any permission denial does in Threadflow.
	for wf, wants := range map[string][]string{
		"archon-read-only": {"completed"},
		"archon-hook-deny": {"failed", "refused permission to use Write"},
	} {
		id, out := b.start(wf)
		wantIn(t, wf, out, wants...)
		if _, err := os.Stat(filepath.Join(b.env["THREADFLOW_HOME"], "runs", id, "work", "out.txt")); !os.IsNotExist(err) {
			t.Errorf("%s: out.txt was written (%v); the node's tools or hook should have prevented it", wf, err)
		}
	}
}

func TestRealCLIArchonCodexEffort(t *testing.T) {
	t.Parallel()
	b := archonAIBot(t, "codex")
	_, out := b.start("archon-codex")
	wantIn(t, "archon-codex", out, "completed", stubapi.Reply)
}

// Archon's structured-output workflows with the real claude CLI against the stub: the happy path
// completes (declared fields, a declared-optional field left out, a bash node's JSON), and the
// fail-fast one fails at the node reading a field its producer's schema does not declare, as their
// headers say.
func TestRealCLIArchonStructuredOutputWorkflows(t *testing.T) {
	t.Parallel()
	b := archonAIBot(t, "claude")
	for _, name := range []string{"e2e-structured-output", "e2e-structured-output-failfast"} {
		src, err := os.ReadFile(filepath.Join("testdata/archon/.archon/workflows/test-workflows", name+".yaml"))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(b.env["WORKFLOWS_DIR"], name+".yaml"), src, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b.api.SetStructuredAnswer(`{"sentiment":"positive"}`)
	_, out := b.start("e2e-structured-output")
	wantIn(t, "e2e-structured-output", out, "completed")

	b.api.SetStructuredAnswer(`{"category":"greeting"}`)
	_, out = b.start("e2e-structured-output-failfast")
	wantIn(t, "e2e-structured-output-failfast", out, "failed at node `bad-ref`",
		"reads $classify.output.nonexistent_field, but the output_format of classify declares no field nonexistent_field")
}
