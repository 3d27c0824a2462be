package test

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"threadflow/workflow"
)

// chatWorkflows are the workflows of the chat acceptance suite, written for every platform.
// Scripts read their inputs from the environment, as the bundled workflows do; $HOME is the bot's
// own temporary home, so a test can leave files there that change what a node does.
var chatWorkflows = map[string]string{
	// gated waits for a person; the gate's output (who approved) is what finish prints.
	"gated.yaml": `name: gated
description: Prepares, waits for a person, then reports the gate's answer.
nodes:
  - id: prepare
    bash: echo "prepared $ARGUMENTS"
  - id: gate
    depends_on: [prepare]
    approval:
      message: Ship $ARGUMENTS?
  - id: finish
    depends_on: [gate]
    bash: echo "finished after $gate.output"
`,
	// asked waits for a person; the answer they give becomes the gate's output, which reply prints.
	"asked.yaml": `name: asked
description: Prepares, asks a person, then prints their answer.
nodes:
  - id: prepare
    bash: echo "prepared $ARGUMENTS"
  - id: gate
    depends_on: [prepare]
    approval:
      message: Ship $ARGUMENTS?
      capture_response: true
  - id: reply
    depends_on: [gate]
    bash: echo "answer was [$gate.output]"
`,
	// picky fails on the input A until $HOME/ready exists; prepare counts its runs in $HOME/prepared.
	"picky.yaml": `name: picky
description: Deploys its input; input A fails until the target is ready.
nodes:
  - id: prepare
    bash: |
      echo "$ARGUMENTS" >> "$HOME/prepared"
      echo "prepared $ARGUMENTS"
  - id: deploy
    depends_on: [prepare]
    bash: |
      if [ "$ARGUMENTS" = "A" ] && [ ! -f "$HOME/ready" ]; then
        echo "target for A is not ready" >&2
        exit 1
      fi
      echo "deployed $ARGUMENTS"
`,
}

// workflowDir writes the workflows of sets to a fresh directory and checks that they load, so a
// typo here fails with the parser's message instead of an "unknown workflow" reply.
func workflowDir(t *testing.T, sets ...map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for _, set := range sets {
		for name, src := range set {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, errs := workflow.Discover(t.TempDir(), []string{dir}); len(errs) > 0 {
		t.Fatalf("test workflows do not load: %v", errs)
	}
	return dir
}

// gateWorkflows are the workflows of the gate tests, for a platform whose three approvers have
// the given platform-qualified ids. guarded needs two of them, never its requester; timed waits two
// seconds and reminds once after one. restricted may be started by alice and bob only; elsewhere
// only in a Slack channel no test talks in.
func gateWorkflows(alice, bob, carol string) map[string]string {
	return map[string]string{
		"restricted.yaml": fmt.Sprintf(`name: restricted
description: Only alice and bob may start it.
access:
  run: [%q, %q]
nodes:
  - id: work
    bash: echo "restricted work on $ARGUMENTS"
`, alice, bob),
		"elsewhere.yaml": `name: elsewhere
description: May be started only in another channel.
access:
  channels: ["slack:C0NOWHERE"]
nodes:
  - id: work
    bash: echo "elsewhere"
`,
		"guarded.yaml": fmt.Sprintf(`name: guarded
description: Ships only after two listed approvers other than the requester agree.
nodes:
  - id: check
    bash: echo "checked $ARGUMENTS"
  - id: confirm
    depends_on: [check]
    approval:
      message: Ship $ARGUMENTS?
      capture_response: true
      approvers: [%q, %q, %q]
      allow_self_approval: false
      required_approvals: 2
  - id: ship
    depends_on: [confirm]
    bash: |
      printf 'shipped %%s with notes [%%s]\n' "$ARGUMENTS" "$confirm.output"
`, alice, bob, carol),
		// timed's reminder is due 3s before its timeout: a timer loop woken late past both (a loaded
		// machine) would fire only the timeout, which wins, and the reminder would never come.
		"timed.yaml": `name: timed
description: Waits four seconds for an answer, reminding once after one.
nodes:
  - id: confirm
    approval:
      message: Anyone there?
      timeout: 4s
      remind_after: 1s
  - id: after
    depends_on: [confirm]
    bash: echo "answered in time"
`,
	}
}

// groupedWorkflow is a gate only the people of group (a Slack user group or a Discord role) may
// answer.
func groupedWorkflow(group string) string {
	return fmt.Sprintf(`name: grouped
description: Waits for someone of a group.
nodes:
  - id: confirm
    approval:
      message: Ship $ARGUMENTS?
      approvers: [%q]
  - id: ship
    depends_on: [confirm]
    bash: echo "shipped $ARGUMENTS"
`, group)
}
