package workflow

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

const typedRelease = `name: release
inputs:
  - name: version
    type: string
    pattern: v[0-9]+\.[0-9]+
    required: true
  - name: env
    type: choice
    choices: [staging, prod]
    default: staging
  - name: dry_run
    type: boolean
    default: false
concurrency:
  group: release-${inputs.env}
  when_busy: queue
nodes:
  - id: ship
    bash: echo "$inputs.version to $INPUT_ENV"
    when: $inputs.dry_run != 'true'
  - id: say
    depends_on: [ship]
    prompt: Shipped $inputs.version to ${inputs.env}.
`

// The three ways of giving inputs give the same run; defaults fill what is left out, and a boolean
// is stored as true or false whatever word was typed.
func TestRunInputsByPairAndPosition(t *testing.T) {
	t.Parallel()
	w := mustParse(t, "release.yaml", []byte(typedRelease))
	want := map[string]string{"version": "v1.2", "env": "staging", "dry_run": "false"}
	for _, words := range [][]string{{"version=v1.2"}, {"version=v1.2", "env=staging", "dry_run=no"}, {"dry_run=off", "version=v1.2"}} {
		got, err := w.RunInputs(words)
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("RunInputs(%q) = %v, %v; want %v", words, got, err, want)
		}
	}
	one := mustParse(t, "one.yaml", []byte("name: one\ninputs:\n  - name: version\n    type: string\nnodes:\n  - id: a\n    bash: echo $inputs.version\n"))
	for _, words := range [][]string{{"v1.2"}, {"version=v1.2"}} {
		got, err := one.RunInputs(words)
		if err != nil || !reflect.DeepEqual(got, map[string]string{"version": "v1.2"}) {
			t.Errorf("one input: RunInputs(%q) = %v, %v", words, got, err)
		}
	}
}

func TestRunInputsRefusals(t *testing.T) {
	t.Parallel()
	w := mustParse(t, "release.yaml", []byte(typedRelease))
	for _, tc := range []struct {
		words   []string
		input   string
		says    string
		missing bool
	}{
		{[]string{"version=v1.2", "colour=red"}, "colour", `there is no input "colour"`, false},
		{[]string{"version=v1.2", "env=moon"}, "env", "it takes one of: staging, prod", false},
		{[]string{"env=prod"}, "version", "input version is required", true},
		{[]string{"version=xv1.2y"}, "version", `text matching v[0-9]+\.[0-9]+`, false}, // the pattern matches the whole value
		{[]string{"version=v1.2", "dry_run=maybe"}, "dry_run", "true or false", false},
		{[]string{"v1.2"}, "", "is not name=value", false},
		{[]string{"version=v1", "version=v2"}, "version", "given twice", false},
	} {
		_, err := w.RunInputs(tc.words)
		var ie *InputError
		if !errors.As(err, &ie) || !errors.Is(err, ErrBadInput) {
			t.Fatalf("RunInputs(%q) = %v, want an InputError", tc.words, err)
		}
		if msg := ie.Of(tc.input); !strings.Contains(msg, tc.says) || ie.Missing != tc.missing {
			t.Errorf("RunInputs(%q): about %q: %q (missing %v); want it to say %q", tc.words, tc.input, msg, ie.Missing, tc.says)
		}
	}
}

func TestInputsReachNodes(t *testing.T) {
	t.Parallel()
	w := mustParse(t, "release.yaml", []byte(typedRelease))
	v := Vars{Inputs: map[string]string{"version": "v1.2", "env": "prod", "dry_run": "false"}}
	if got := ShellScript(w.Nodes[0].Bash); got != `echo "${INPUT_VERSION} to $INPUT_ENV"` {
		t.Errorf("ShellScript = %q", got)
	}
	if env := ShellEnv(v); !slices.Contains(env, "INPUT_VERSION=v1.2") || !slices.Contains(env, "INPUT_DRY_RUN=false") {
		t.Errorf("ShellEnv = %q", env)
	}
	if got := Expand(w.Nodes[1].Prompt, v); got != "Shipped v1.2 to prod.\n" && got != "Shipped v1.2 to prod." {
		t.Errorf("Expand = %q", got)
	}
	if !w.Nodes[0].When.Eval(v) {
		t.Error("when $inputs.dry_run != 'true' is false for dry_run=false")
	}
	if g, err := w.GroupFor(v.Inputs); err != nil || g != "release-prod" {
		t.Errorf("GroupFor = %q, %v", g, err)
	}
	if !w.Typed() || w.Concurrency.WhenBusy != WhenBusyQueue {
		t.Errorf("typed %v, concurrency %+v", w.Typed(), w.Concurrency)
	}
}

// Untyped inputs keep documenting $ARGUMENTS: no inputs are stored and CheckArgs decides.
func TestUntypedInputsKeepArguments(t *testing.T) {
	t.Parallel()
	w := mustParse(t, "plain.yaml", []byte("name: plain\ninputs:\n  - name: what\n    required: true\nnodes:\n  - id: a\n    bash: echo \"$ARGUMENTS\"\n"))
	if got, err := w.RunInputs([]string{"anything", "at=all"}); got != nil || err != nil {
		t.Errorf("RunInputs = %v, %v; want none", got, err)
	}
	if err := w.CheckArgs(""); !errors.Is(err, ErrMissingInput) {
		t.Errorf("CheckArgs(\"\") = %v", err)
	}
}

func TestInputDeclarationErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ src, says string }{
		{"name: a\ninputs:\n  - name: x\n    type: string\n    choices: [a]\nnodes:\n  - id: n\n    bash: echo\n", "`choices` belong to inputs of type choice"},
		{"name: a\ninputs:\n  - name: x\n    type: choice\nnodes:\n  - id: n\n    bash: echo\n", "lists no `choices`"},
		{"name: a\ninputs:\n  - name: x\n    type: number\n    default: ten\nnodes:\n  - id: n\n    bash: echo\n", "the default does not fit"},
		{"name: a\ninputs:\n  - name: x\n    pattern: '('\nnodes:\n  - id: n\n    bash: echo\n", "not a regular expression"},
		{"name: a\ninputs:\n  - name: x\n    type: flag\nnodes:\n  - id: n\n    bash: echo\n", "use one of: string, choice, boolean, number"},
		{"name: a\ninputs:\n  - name: x\n    type: string\nnodes:\n  - id: n\n    bash: echo $inputs.y\n", "there is no input `y`"},
		{"name: a\ninputs:\n  - name: x\n    type: string\nnodes:\n  - id: n\n    bash: echo\n    when: $inputs.y == 'a'\n", "there is no input `y`"},
		{"name: a\nnodes:\n  - id: n\n    bash: echo $inputs.y\n", "has no typed inputs"},
		{"name: a\ninputs:\n  - name: x\n    type: string\nconcurrency:\n  group: r-${inputs.z}\nnodes:\n  - id: n\n    bash: echo\n", "there is no input `z`"},
		{"name: a\nconcurrency:\n  group: r-$RUN_ID\nnodes:\n  - id: n\n    bash: echo\n", "may read only ${inputs.<name>}"},
		{"name: a\nconcurrency:\n  group: r\n  when_busy: wait\nnodes:\n  - id: n\n    bash: echo\n", "use one of: queue, refuse"},
		{"name: a\ninputs:\n  - name: a-b\n    type: string\n  - name: a_b\n    type: string\nnodes:\n  - id: n\n    bash: echo\n", "would both be INPUT_A_B"},
	} {
		_, err := Parse("a.yaml", []byte(tc.src))
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("Parse(%q) = %v, want it to say %q", tc.src, err, tc.says)
		}
	}
}
