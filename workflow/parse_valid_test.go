package workflow

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"

	"threadflow/db"
)

const fullWorkflow = `name: full
description: every field
inputs:
  - name: target
    description: what to build
    required: true
nodes:
  - id: build
    bash: make "$ARGUMENTS"
    timeout: 5m
    retry: {max_attempts: 3, delay: 10s}
    continue_on_error: true
  - id: ask
    depends_on: [build]
    when: $build.output == 'ok' || !$ARGUMENTS
    trigger_rule: all_done
    prompt: Explain $build.output
    provider: codex
    model: gpt-5
    context: shared
    permissions: read
  - id: gate
    depends_on: [ask]
    approval:
      message: Ship it?
      capture_response: true
  - id: refine
    depends_on: [gate]
    trigger_rule: none_failed_min_one_success
    provider: claude
    loop:
      prompt: Improve
      until: DONE
      max_iterations: 4
      fresh_context: true
      interactive: true
      gate_message: More?
`

func TestParseDecodesEveryField(t *testing.T) {
	t.Parallel()
	w := mustParse(t, "full.yaml", []byte(fullWorkflow))
	if w.Name != "full" || w.Description != "every field" || w.Path != "full.yaml" || string(w.Source) != fullWorkflow {
		t.Errorf("header = %q %q %q", w.Name, w.Description, w.Path)
	}
	if want := []Input{{Name: "target", Description: "what to build", Required: true}}; !reflect.DeepEqual(w.Inputs, want) {
		t.Errorf("inputs = %+v", w.Inputs)
	}
	build := w.Node("build")
	wantBuild := Node{ID: "build", TriggerRule: AllSuccess, Timeout: 5 * time.Minute, Kind: KindBash, Bash: `make "$ARGUMENTS"`,
		Retry: Retry{MaxAttempts: 3, Delay: 10 * time.Second, On: RetryAll}, ContinueOnError: true, Context: ContextFresh, Line: 8, Col: 5}
	if !reflect.DeepEqual(*build, wantBuild) {
		t.Errorf("build =\n%+v\nwant\n%+v", *build, wantBuild)
	}
	ask := w.Node("ask")
	if ask.Kind != KindPrompt || ask.Prompt != "Explain $build.output" || ask.Provider != "codex" || ask.Model != "gpt-5" ||
		ask.Context != ContextShared || ask.Permissions != PermRead || ask.TriggerRule != AllDone || ask.When.String() != "$build.output == 'ok' || !$ARGUMENTS" {
		t.Errorf("ask = %+v", *ask)
	}
	if ask.Retry != (Retry{MaxAttempts: 1, On: RetryTransient}) {
		t.Errorf("default retry of a prompt = %+v; a shell node's default `on` is all, a prompt's transient", ask.Retry)
	}
	if g := w.Node("gate"); g.Kind != KindApproval || !reflect.DeepEqual(*g.Approval, Approval{Message: "Ship it?", CaptureResponse: true, Policy: db.GatePolicy{AllowSelfApproval: true}, OnTimeout: TimeoutReject}) {
		t.Errorf("gate = %+v", *g)
	}
	r := w.Node("refine")
	wantLoop := Loop{Prompt: "Improve", Until: "DONE", MaxIterations: 4, FreshContext: true, Interactive: true, GateMessage: "More?"}
	if r.Kind != KindLoop || *r.Loop != wantLoop || r.Provider != "claude" || r.TriggerRule != NoneFailedMinOneSuccess {
		t.Errorf("refine = %+v loop %+v", *r, *r.Loop)
	}
	if w.Node("missing") != nil {
		t.Error("Node(missing) is not nil")
	}
}

// A run freezes Source; parsing the frozen copy must give back the same workflow.
// mustParse parses a workflow the test expects to be valid.
func mustParse(t *testing.T, name string, src []byte) *Workflow {
	t.Helper()
	w, err := Parse(name, src)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

func TestParseSourceRoundTrip(t *testing.T) {
	t.Parallel()
	w := mustParse(t, "full.yaml", []byte(fullWorkflow))
	again := mustParse(t, w.Path, w.Source)
	if !reflect.DeepEqual(w, again) {
		t.Errorf("round trip differs:\n%+v\n%+v", w, again)
	}
}

func TestParseCopiesSource(t *testing.T) {
	t.Parallel()
	src := []byte(fullWorkflow)
	w := mustParse(t, "full.yaml", src)
	src[0] = 'X'
	if w.Source[0] != 'n' {
		t.Error("Workflow.Source aliases the caller's buffer; a frozen run could change under it")
	}
}

func TestParseFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "full.yaml")
	if err := os.WriteFile(path, []byte(fullWorkflow), 0o600); err != nil {
		t.Fatal(err)
	}
	w, err := ParseFile(path)
	if err != nil || w.Path != path || w.Name != "full" {
		t.Fatalf("ParseFile = %v, %v", w, err)
	}
	if _, err := ParseFile(filepath.Join(t.TempDir(), "none.yaml")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("missing file error = %v", err)
	}
}

func TestParseAcceptsBareApprovalAndBracedRefs(t *testing.T) {
	t.Parallel()
	src := "name: x\nnodes:\n  - id: a\n    bash: echo\n  - id: b\n    depends_on: [a]\n    approval:\n    when: ${a.output}\n"
	w := mustParse(t, "wf.yaml", []byte(src))
	if b := w.Node("b"); b.Approval == nil || !reflect.DeepEqual(*b.Approval, Approval{Policy: db.GatePolicy{AllowSelfApproval: true}, OnTimeout: TimeoutReject}) {
		t.Errorf("approval = %+v", b.Approval)
	}
}
