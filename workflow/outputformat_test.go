package workflow

import (
	"slices"
	"strings"
	"testing"
)

// judge is a prompt node with a structured answer, for the field tests: verdict and reasons.
const judge = "name: x\nnodes:\n  - id: judge\n    prompt: judge it\n    output_format:\n      type: object\n" +
	"      properties:\n        verdict: {type: string, enum: [approve, reject]}\n        score: {type: integer}\n      required: [verdict]\n"

// TestScriptAndOutputFormatProblems: every mistake in script nodes, output_format and field access
// is a load error at its position, never a value that silently reads empty.
func TestScriptAndOutputFormatProblems(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		src  string
		want []string
	}{
		"script without runtime": {"name: x\nnodes:\n  - id: s\n    script: print(1)\n", []string{
			"wf.yaml:4:5: node `s` has no `runtime`; add `runtime:` with one of: bun, node, python, uv"}},
		"unknown runtime": {"name: x\nnodes:\n  - id: s\n    script: print(1)\n    runtime: deno\n", []string{
			"wf.yaml:5:14: `runtime` \"deno\" is not accepted; use one of: bun, node, python, uv"}},
		"packages off uv": {"name: x\nnodes:\n  - id: s\n    script: print(1)\n    runtime: python\n    packages: [requests]\n", []string{
			"wf.yaml:6:5: `packages` applies only to `runtime: uv`; remove it, or run the script with uv"}},
		"package read as an option": {"name: x\nnodes:\n  - id: s\n    script: print(1)\n    runtime: uv\n    packages: [--index-url=x]\n", []string{
			"wf.yaml:6:16: package \"--index-url=x\" is not a requirement like requests or \"rich>=13\"; remove the spaces or leading '-'"}},
		"arguments pasted into code": {"name: x\nnodes:\n  - id: s\n    script: console.log(\"$ARGUMENTS\")\n    runtime: node\n", []string{
			"wf.yaml:4:26: `script` of node `s` writes $ARGUMENTS, whose value would become code; read it from the environment instead: " +
				"process.env.ARGUMENTS (bun, node) or os.environ[\"ARGUMENTS\"] (python, uv)"}},
		"field pasted into code": {judge + "  - id: s\n    depends_on: [judge]\n    script: |\n      v = '$judge.output.verdict'\n    runtime: python\n", []string{
			"wf.yaml:14:12: `script` of node `s` writes $judge.output.verdict, whose value would become code; read it from the environment instead: " +
				"process.env.TF_FIELD_JUDGE_VERDICT (bun, node) or os.environ[\"TF_FIELD_JUDGE_VERDICT\"] (python, uv)"}},
		"runtime on a bash node": {"name: x\nnodes:\n  - id: a\n    bash: echo\n    runtime: bun\n", []string{
			"wf.yaml:5:5: `runtime` applies only to script nodes; remove it from this bash node"}},
		"output_format on a bash node": {"name: x\nnodes:\n  - id: a\n    bash: echo\n    output_format: {type: object, properties: {a: {type: string}}}\n", []string{
			"wf.yaml:5:5: `output_format` applies only to prompt nodes; remove it from this bash node"}},
		"output_format without properties": {"name: x\nnodes:\n  - id: a\n    prompt: hi\n    output_format: {type: string}\n", []string{
			"wf.yaml:5:20: `output_format` must describe an object with `properties` (type: object), so that $a.output.<field> can read its fields"}},
		"output_format refers to a file": {"name: x\nnodes:\n  - id: a\n    prompt: hi\n    output_format:\n      type: object\n      properties: {a: {$ref: 'file:///etc/passwd'}}\n", []string{
			"wf.yaml:6:7: `output_format` is not a valid JSON Schema: "}},
		"output_format is not a schema": {"name: x\nnodes:\n  - id: a\n    prompt: hi\n    output_format:\n      type: object\n      properties: {a: {type: 5}}\n", []string{
			"wf.yaml:6:7: `output_format` is not a valid JSON Schema: "}},
		"undeclared field in when": {judge + "  - id: b\n    depends_on: [judge]\n    when: $judge.output.verdit == 'approve'\n    bash: echo\n", []string{
			"wf.yaml:13:11: `when` of node `b` reads `$judge.output.verdit` but the output_format of `judge` declares no field `verdit`; did you mean `verdict`?"}},
		"undeclared field in a prompt": {judge + "  - id: b\n    depends_on: [judge]\n    prompt: Fix ${judge.output.reasons}\n", []string{
			"wf.yaml:13:17: `prompt` of node `b` reads `$judge.output.reasons` but the output_format of `judge` declares no field `reasons`; known fields: score, verdict"}},
		"field of a prose answer": {"name: x\nnodes:\n  - id: a\n    prompt: hi\n  - id: b\n    depends_on: [a]\n    bash: echo $a.output.x\n", []string{
			"wf.yaml:7:16: `bash` of node `b` reads `$a.output.x` but `a` answers in prose; give it an `output_format` (a JSON Schema) that declares `x`"}},
		"field of a gate": {"name: x\nnodes:\n  - id: a\n    approval: {message: go}\n  - id: b\n    depends_on: [a]\n    bash: echo $a.output.x\n", []string{
			"wf.yaml:7:16: `bash` of node `b` reads `$a.output.x` but `a` is an approval node, whose output has no fields; read `$a.output`"}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Parse("wf.yaml", []byte(c.src))
			assertErrorPrefixes(t, err, c.want)
		})
	}
}

// assertErrorPrefixes is assertErrors where each wanted message may be the start of the error (the
// schema library words its own part).
func assertErrorPrefixes(t *testing.T, err error, want []string) {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want %q", want)
	}
	got := strings.Split(err.Error(), "\n")
	if len(got) != len(want) {
		t.Fatalf("errors:\n%s\nwant %d:\n%s", err, len(want), strings.Join(want, "\n"))
	}
	for i := range want {
		if !strings.HasPrefix(got[i], want[i]) {
			t.Errorf("error %d:\n got %s\nwant %s", i, got[i], want[i])
		}
	}
}

func TestFieldsAreReadEverywhere(t *testing.T) {
	t.Parallel()
	src := judge + "  - id: b\n    depends_on: [judge]\n    when: $judge.output.verdict == 'approve' && ${judge.output.score} != ''\n" +
		"    bash: echo \"$judge.output.verdict\" ${judge.output.score}\n  - id: c\n    depends_on: [judge]\n" +
		"    prompt: \"Ship it ($judge.output.verdict, $judge.output.score). Next: $judge.output.\"\n"
	w := mustParse(t, "wf.yaml", []byte(src))
	answer := `{"verdict": "approve", "score": 7, "extra": {"a": [1, 2]}, "none": null, "bad-key": 1}`
	v := Vars{Outputs: map[string]string{"judge": answer}, Fields: map[string]map[string]string{"judge": FieldsOf(answer)}}
	if got, want := v.Fields["judge"], map[string]string{"verdict": "approve", "score": "7", "extra": `{"a":[1,2]}`, "none": ""}; !mapsEqual(got, want) {
		t.Errorf("FieldsOf = %q, want %q", got, want)
	}
	b, c := w.Node("b"), w.Node("c")
	if !b.When.Eval(v) {
		t.Errorf("when %s is false for %s", b.When, answer)
	}
	if b.When.Eval(Vars{Fields: map[string]map[string]string{"judge": {"verdict": "reject", "score": "1"}}}) {
		t.Errorf("when %s holds for a rejection", b.When)
	}
	if got, want := ShellScript(b.Bash), `echo "${TF_FIELD_JUDGE_VERDICT}" ${TF_FIELD_JUDGE_SCORE}`; got != want {
		t.Errorf("ShellScript = %q, want %q", got, want)
	}
	env := ShellEnv(v)
	for _, kv := range []string{"TF_FIELD_JUDGE_VERDICT=approve", "TF_FIELD_JUDGE_SCORE=7", `TF_FIELD_JUDGE_EXTRA={"a":[1,2]}`, "TF_OUTPUT_JUDGE=" + answer} {
		if !slices.Contains(env, kv) {
			t.Errorf("ShellEnv lacks %s: %q", kv, env)
		}
	}
	if got, want := Expand(c.Prompt, v), "Ship it (approve, 7). Next: "+answer+"."; got != want {
		t.Errorf("Expand = %q, want %q", got, want)
	}
	if FieldsOf("approve") != nil || FieldsOf("[1]") != nil || FieldsOf("{not json") != nil {
		t.Error("FieldsOf found fields in output that is not a JSON object")
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func TestOutputFormatValidatesAnswers(t *testing.T) {
	t.Parallel()
	o := mustParse(t, "wf.yaml", []byte(judge)).Node("judge").OutputFormat
	if !slices.Equal(o.Fields, []string{"score", "verdict"}) {
		t.Errorf("Fields = %q", o.Fields)
	}
	if err := o.Validate([]byte(`{"verdict":"reject","score":3}`)); err != nil {
		t.Errorf("a valid answer was refused: %v", err)
	}
	for answer, want := range map[string]string{
		`{"verdict":"maybe"}`:                  "at /verdict: value must be one of 'approve', 'reject'",
		`{"score":1}`:                          "at /: missing property 'verdict'",
		`{"verdict":"approve","score":"high"}`: "at /score: got string, want integer",
		`I approve`:                            "the answer is not JSON",
	} {
		err := o.Validate([]byte(answer))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate(%s) = %v, want %q", answer, err, want)
		}
	}
}

func TestScriptNodes(t *testing.T) {
	t.Parallel()
	src := judge + "  - id: s\n    depends_on: [judge]\n    runtime: uv\n    script: |\n      # /// script\n      # dependencies = [\n      #   \"rich\",\n      # ]\n      # ///\n" +
		"      import os; print(os.environ['TF_FIELD_JUDGE_VERDICT'], os.environ.get('TF_OUTPUT_OTHER'))\n" +
		"  - id: other\n    bash: echo\n  - id: t\n    depends_on: [s, other]\n    runtime: bun\n    script: console.log(process.env.TF_FIELD_JUDGE_SCORE)\n"
	w := mustParse(t, "wf.yaml", []byte(src))
	s, tn := w.Node("s"), w.Node("t")
	if s.Kind != KindScript || s.Script.Runtime != RuntimeUV || !s.Script.NeedsPackages() || s.Retry.On != RetryAll {
		t.Errorf("s = %+v, script %+v", s, s.Script)
	}
	if tn.Script.NeedsPackages() {
		t.Error("a bun script declares packages")
	}
	if in := w.Graph().Inputs(tn); !in["judge"] || !in["s"] || !in["other"] {
		t.Errorf("Inputs(t) = %v: want judge (named as TF_FIELD_JUDGE_SCORE), s and other", in)
	}
	noDeps := &Script{Code: "# /// script\n# dependencies = []\n# ///\nprint(1)\n"}
	if noDeps.NeedsPackages() {
		t.Error("an empty PEP 723 dependencies list counts as packages")
	}
}
