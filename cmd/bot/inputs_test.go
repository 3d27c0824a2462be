package main

import (
	"encoding/json"
	"strings"
	"testing"
)

const (
	tagWorkflow = `name: tag
inputs:
  - name: version
    type: string
    pattern: v[0-9]+\.[0-9]+\.[0-9]+
    required: true
nodes:
  - id: tag
    bash: echo "tagging $INPUT_VERSION"
`
	deployWorkflow = `name: deploy
inputs:
  - name: version
    type: string
    required: true
  - name: env
    type: choice
    choices: [staging, prod]
    required: true
nodes:
  - id: deploy
    bash: echo "deploying $INPUT_VERSION to $INPUT_ENV"
`
	lockWorkflow = `name: lock
concurrency:
  group: the-lock
  when_busy: refuse
nodes:
  - id: hold
    approval:
      message: Let go of the lock?
`
)

// runInputs reads the inputs of a run from status --json.
func runInputs(t *testing.T, env map[string]string, id string) map[string]string {
	t.Helper()
	out, code := cli(t, env, "workflow", "status", "--json", id)
	var s struct {
		Inputs map[string]string `json:"inputs"`
		Group  string            `json:"concurrency_group"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &s) != nil {
		t.Fatalf("status --json %s = exit %d:\n%s", id, code, out)
	}
	return s.Inputs
}

// --input, name=value and a one-input workflow's positional text give the same run.
func TestRunInputsFromTheTerminal(t *testing.T) {
	env := cliEnv(t)
	addWorkflow(t, env, "tag", tagWorkflow)
	for _, args := range [][]string{{"tag", "--input", "version=v1.2.3"}, {"tag", "--input=version=v1.2.3"}, {"tag", "version=v1.2.3"}, {"tag", "v1.2.3"}} {
		_, id := runWorkflow(t, env, 0, args...)
		if in := runInputs(t, env, id); len(in) != 1 || in["version"] != "v1.2.3" {
			t.Errorf("workflow run %v: inputs %v, want version=v1.2.3", args, in)
		}
		if out, _ := cli(t, env, "workflow", "logs", id, "tag"); strings.TrimSpace(out) != "tagging v1.2.3" {
			t.Errorf("workflow run %v: the script printed %q", args, out)
		}
	}
}

// Unknown inputs, bad choices, values the pattern refuses and missing required inputs are refused
// (exit 2) with a message naming the input and what it accepts, and nothing is written.
func TestRunInputsRefusedBeforeAnythingIsWritten(t *testing.T) {
	env := cliEnv(t)
	addWorkflow(t, env, "tag", tagWorkflow)
	addWorkflow(t, env, "deploy", deployWorkflow)
	for _, tc := range []struct {
		args []string
		says string
	}{
		{[]string{"deploy", "version=v1", "env=prod", "colour=red"}, `there is no input "colour"; deploy takes version=… env=…`},
		{[]string{"deploy", "version=v1", "--input", "env=moon"}, `input env does not accept "moon": it takes one of: staging, prod`},
		{[]string{"deploy", "env=prod"}, "input version is required: give version=<text of at most 4096 bytes>"},
		{[]string{"tag", "1.2.3"}, `input version does not accept "1.2.3": it takes text matching v[0-9]+\.[0-9]+\.[0-9]+`},
		{[]string{"tag", "--input"}, "--input needs NAME=VALUE"},
	} {
		b := runBot(t, env, append([]string{"workflow", "run"}, tc.args...)...)
		err := b.result(t)
		if exitCode(err) != 2 || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("workflow run %v = exit %d, %v; want exit 2 saying %q", tc.args, exitCode(err), err, tc.says)
		}
	}
	if out, _ := cli(t, env, "workflow", "runs", "--json"); strings.TrimSpace(out) != "[]" {
		t.Fatalf("refused runs were written:\n%s", out)
	}
}

// A run refused because another run holds its concurrency group exits 5, naming the holder; a
// paused holder keeps the group, and abandoning it frees the group.
func TestBusyGroupExitsFive(t *testing.T) {
	env := cliEnv(t)
	addWorkflow(t, env, "lock", lockWorkflow)
	_, holder := runWorkflow(t, env, 3, "lock") // paused at its gate, holding the-lock
	b := runBot(t, env, "workflow", "run", "lock")
	err := b.result(t)
	if exitCode(err) != exitBusy || !strings.Contains(err.Error(), holder) || !strings.Contains(err.Error(), "the-lock") {
		t.Fatalf("a second lock run = exit %d, %v; want exit %d naming %s", exitCode(err), err, exitBusy, holder)
	}
	if _, code := cli(t, env, "workflow", "abandon", holder); code != 0 {
		t.Fatalf("abandon = exit %d", code)
	}
	runWorkflow(t, env, 3, "lock")
}
