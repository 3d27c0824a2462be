package workflow

import (
	"errors"
	"strings"
	"testing"
)

// head is the start of most test workflows: one valid node `a` that others can depend on.
const head = "name: x\nnodes:\n  - id: a\n    bash: echo\n"

// kinds is how messages list the node kinds: bash, prompt, approval, loop...
var kinds = strings.Join(kindFields, ", ")

func TestParseReportsEveryProblemWithPosition(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		src  string
		want []string
	}{
		{"unknown node field", head + "    depend_on: [b]\n", []string{
			"wf.yaml:5:5: unknown field `depend_on` in a node; did you mean `depends_on`?"}},
		{"unknown top field without a close match", "name: x\nnodez: []\nzzzzzzzz: 1\n", []string{
			"wf.yaml:1:1: missing `nodes`; add a list of nodes, each with an `id` and one of " + kinds,
			"wf.yaml:2:1: unknown field `nodez` in the workflow; did you mean `nodes`?",
			"wf.yaml:3:1: unknown field `zzzzzzzz` in the workflow; known fields: name, description, inputs, access, triggers, concurrency, max_cost_usd, nodes"}},
		{"field set twice", head + "    bash: ls\n", []string{
			"wf.yaml:5:5: field `bash` is set twice in a node (first at line 4); keep one"}},
		{"duplicate id", head + "  - id: a\n    bash: echo\n", []string{
			"wf.yaml:5:9: duplicate node id `a`; the first is at line 3, column 5; rename one"}},
		{"unknown dependency", head + "  - id: b\n    depends_on: [aa]\n    bash: echo\n", []string{
			"wf.yaml:6:18: node `b` depends on unknown node `aa`; did you mean `a`?"}},
		{"dependency listed twice", head + "  - id: b\n    depends_on: [a, a]\n    bash: echo\n", []string{
			"wf.yaml:6:21: `a` is listed twice in depends_on; remove one"}},
		{"depends_on not a list", head + "  - id: b\n    depends_on: a\n    bash: echo\n", []string{
			"wf.yaml:6:17: `depends_on` must be a list like [build, test], found \"a\""}},
		{"cycle", "name: x\nnodes:\n  - id: b\n    depends_on: [a]\n    bash: echo\n  - id: a\n    depends_on: [b]\n    bash: echo\n", []string{
			"wf.yaml:6:9: dependency cycle: a -> b -> a; remove one of these depends_on entries"}},
		{"self dependency", "name: x\nnodes:\n  - id: a\n    depends_on: [a]\n    bash: echo\n", []string{
			"wf.yaml:3:9: dependency cycle: a -> a; remove one of these depends_on entries"}},
		{"when does not parse, plain", head + "  - id: b\n    depends_on: [a]\n    when: $a.output == yes\n    bash: echo\n", []string{
			"wf.yaml:7:24: invalid `when`: unexpected `yes`; quote literal text like 'yes' and start variables with $"}},
		{"when does not parse, double quoted with escapes", head + "  - id: b\n    depends_on: [a]\n    when: \"'\\\"' == $a.output &&\"\n    bash: echo\n", []string{
			"wf.yaml:7:32: invalid `when`: expected a variable, a quoted string, '(' or '!', found end of condition"}},
		{"when does not parse, single quoted", head + "  - id: b\n    depends_on: [a]\n    when: '$a.output == ''x'' )'\n    bash: echo\n", []string{
			"wf.yaml:7:31: invalid `when`: unexpected `)`; join conditions with && or ||"}},
		{"when reads a node that is not upstream", head + "  - id: b\n    when: $a.output == 'x'\n    bash: echo\n", []string{
			"wf.yaml:6:11: `when` of node `b` reads `$a.output` but `a` is not upstream of it; add it to depends_on"}},
		{"when reads unknown node in a block", head + "  - id: b\n    depends_on: [a]\n    when: |\n      $a.output == 'x' &&\n        $ab.output\n    bash: echo\n", []string{
			"wf.yaml:9:9: `when` of node `b` reads `$ab.output` but there is no node `ab`; did you mean `a`?"}},
		{"empty when block at the end of the file points at its indicator", head + "  - id: b\n    bash: echo\n    when: |", []string{
			"wf.yaml:7:11: invalid `when`: condition is empty; write one like `$build.output == 'ok'` or remove `when`"}},
		{"unfinished when block at the end of the file", head + "  - id: b\n    depends_on: [a]\n    bash: echo\n    when: |\n      $a.output == 'x' &&\n", []string{
			"wf.yaml:9:26: invalid `when`: expected a variable, a quoted string, '(' or '!', found end of condition"}},
		{"when reads its own node", head + "  - id: b\n    depends_on: [a]\n    when: ${b.output}\n    bash: echo\n", []string{
			"wf.yaml:7:11: `when` of node `b` reads its own output, which does not exist yet; read an upstream node instead"}},
		{"transitive ancestor is fine, text reads a non-ancestor", head +
			"  - id: b\n    depends_on: [a]\n    bash: echo\n  - id: c\n    depends_on: [b]\n    when: $a.output\n    prompt: |\n      Summarise $a.output and $d.output\n  - id: d\n    bash: echo\n", []string{
			"wf.yaml:12:31: `prompt` of node `c` reads `$d.output` but `d` is not upstream of it; add it to depends_on"}},
		{"loop without max_iterations", "name: x\nnodes:\n  - id: a\n    loop: {prompt: hi}\n", []string{
			"wf.yaml:4:11: loop has no `max_iterations`; add `max_iterations: <1..100>` so it cannot run forever"}},
		{"loop max_iterations out of range", "name: x\nnodes:\n  - id: a\n    loop:\n      prompt: hi\n      max_iterations: 101\n", []string{
			"wf.yaml:6:23: `max_iterations` must be between 1 and 100, found 101"}},
		{"loop without prompt", "name: x\nnodes:\n  - id: a\n    loop:\n      max_iterations: 3\n", []string{
			"wf.yaml:5:7: loop has no `prompt`; add the text each iteration sends"}},
		{"no kind", head + "  - id: b\n    depends_on: [a]\n", []string{
			"wf.yaml:5:5: node `b` does nothing; add exactly one of: " + kinds}},
		{"several kinds", head + "    prompt: hi\n    approval: {}\n", []string{
			"wf.yaml:5:5: node `a` has `bash` and `prompt` and `approval`; a node has exactly one kind, split it into separate nodes"}},
		{"bad durations", head + "    timeout: 5 minutes\n    retry: {max_attempts: 2, delay: soon}\n", []string{
			"wf.yaml:5:14: `timeout` is not a duration: \"5 minutes\"; write a number with a unit, like 30s, 5m or 1h30m",
			"wf.yaml:6:37: `delay` is not a duration: \"soon\"; write a number with a unit, like 30s, 5m or 1h30m"}},
		{"zero timeout", head + "    timeout: 0s\n", []string{
			"wf.yaml:5:14: `timeout` must be more than zero; remove it for no node timeout"}},
		{"bad retry", head + "    retry: {max_attempts: 0, on: everything}\n", []string{
			"wf.yaml:5:27: `max_attempts` counts the first try and must be at least 1, found 0",
			"wf.yaml:5:34: `on` \"everything\" is not accepted; use one of: transient, all"}},
		{"bad trigger_rule", head + "    trigger_rule: always\n", []string{
			"wf.yaml:5:19: `trigger_rule` \"always\" is not accepted; use one of: all_success, one_success, none_failed_min_one_success, all_done"}},
		{"ids sharing an environment name", "name: x\nnodes:\n  - id: a-b\n    bash: echo\n  - id: a_b\n    bash: echo\n", []string{
			"wf.yaml:5:9: node ids `a-b` (line 3) and `a_b` both become the shell variable TF_OUTPUT_A_B; rename one so they differ by more than '-' and '_'"}},
		{"an id that is another's output file variable", "name: x\nnodes:\n  - id: a\n    bash: echo\n  - id: a-file\n    bash: echo\n", []string{
			"wf.yaml:5:9: node id `a-file` becomes the shell variable TF_OUTPUT_A_FILE, which already carries the output file of node `a` (line 3); rename `a-file`"}},
		{"bad names", "name: My Flow\nnodes:\n  - id: Build\n    bash: echo\n", []string{
			"wf.yaml:1:7: `name` \"My Flow\" is not a valid name; use lower-case letters, digits, '-' and '_', starting with a letter or digit, at most 64 characters",
			"wf.yaml:3:9: `id` \"Build\" is not a valid name; use lower-case letters, digits, '-' and '_', starting with a letter or digit, at most 64 characters"}},
		{"name too long", "name: " + strings.Repeat("a", 65) + "\nnodes:\n  - id: a\n    bash: echo\n", []string{
			"wf.yaml:1:7: `name` \"" + strings.Repeat("a", 40) + "...\" is not a valid name; use lower-case letters, digits, '-' and '_', starting with a letter or digit, at most 64 characters"}},
		{"missing id, other problems still reported", "name: x\nnodes:\n  - timeout: forever\n", []string{
			"wf.yaml:3:5: node has no `id`; add `id: <name>` so other nodes can depend on it",
			"wf.yaml:3:5: this node does nothing; add exactly one of: " + kinds,
			"wf.yaml:3:14: `timeout` is not a duration: \"forever\"; write a number with a unit, like 30s, 5m or 1h30m"}},
		{"when continued on the next line, plain", head + "  - id: b\n    depends_on: [a]\n    when: $a.output == 'x' &&\n      $zz.output\n    bash: echo\n", []string{
			"wf.yaml:7:11: `when` of node `b` reads `$zz.output` but there is no node `zz`; did you mean `a`?"}},
		{"when continued on the next line, quoted", head + "  - id: b\n    depends_on: [a]\n    when: \"$a.output == 'x' &&\n      $zz.output\"\n    bash: echo\n", []string{
			"wf.yaml:7:11: `when` of node `b` reads `$zz.output` but there is no node `zz`; did you mean `a`?"}},
		{"empty nodes", "name: x\nnodes: []\n", []string{
			"wf.yaml:2:8: `nodes` must be a non-empty list of nodes, found a list"}},
		{"agent fields on a bash node", head + "    provider: claude\n    context: shared\n", []string{
			"wf.yaml:5:5: `provider` applies only to prompt and loop nodes; remove it from this bash node",
			"wf.yaml:6:5: `context` applies only to prompt and loop nodes; remove it from this bash node"}},
		{"bad provider and context", "name: x\nnodes:\n  - id: a\n    prompt: hi\n    provider: gpt\n    context: reuse\n", []string{
			"wf.yaml:5:15: `provider` \"gpt\" is not accepted; use one of: claude, codex",
			"wf.yaml:6:14: `context` \"reuse\" is not accepted; use one of: fresh, shared"}},
		{"bad max_cost_usd", "name: x\nmax_cost_usd: -1\nnodes:\n  - id: a\n    prompt: hi\n    max_cost_usd: lots\n  - id: b\n    bash: echo\n    max_cost_usd: 1\n  - id: c\n    prompt: hi\n    max_cost_usd: 0\n", []string{
			"wf.yaml:2:15: `max_cost_usd` must be an amount of US dollars more than 0, like 5 or 0.50, found \"-1\"",
			"wf.yaml:6:19: `max_cost_usd` must be an amount of US dollars more than 0, like 5 or 0.50, found \"lots\"",
			"wf.yaml:9:5: `max_cost_usd` applies only to prompt and loop nodes; remove it from this bash node",
			"wf.yaml:12:19: `max_cost_usd` must be an amount of US dollars more than 0, like 5 or 0.50, found \"0\""}},
		{"bad permissions", "name: x\nnodes:\n  - id: a\n    prompt: hi\n    permissions: write\n  - id: b\n    bash: echo\n    permissions: read\n", []string{
			"wf.yaml:5:18: `permissions` \"write\" is not accepted; use one of: read, edit, full",
			"wf.yaml:8:5: `permissions` applies only to prompt and loop nodes; remove it from this bash node"}},
		{"empty script", "name: x\nnodes:\n  - id: a\n    bash: '  '\n", []string{
			"wf.yaml:4:11: `bash` is empty; write its text or remove the field"}},
		{"bad booleans and inputs", "name: x\ninputs:\n  - name: t\n    required: yes please\n  - name: t\n  - description: no name\nnodes:\n  - id: a\n    approval: {capture_response: 1}\n", []string{
			"wf.yaml:4:15: `required` must be true or false, found \"yes please\"",
			"wf.yaml:5:11: input `t` is declared twice (first at line 3); rename or remove one",
			"wf.yaml:6:5: input has no `name`; add `name: <what the argument is>`",
			"wf.yaml:9:34: `capture_response` must be true or false, found \"1\""}},
		{"aliases are refused", "name: x\nnodes:\n  - id: a\n    bash: &s echo\n  - id: b\n    bash: *s\n", []string{
			"wf.yaml:6:11: `bash` must be text, found an alias (anchors and aliases are not supported)"}},
		{"yaml syntax", "name: x\nnodes:\n - id: a\n   bash: echo\n  - id: b\n", []string{
			"wf.yaml:5:3: this line is indented 2 spaces, less than `bash` on line 4 (3 spaces) and more than the `-` on line 3 (1 space); line it up with the key it belongs to"}},
		{"yaml syntax in a file too large to locate it", "name: x\nnodes:\n - id: a\n   bash: echo\n" + strings.Repeat("   #\n", maxLocateSize/5) + "  - id: b\n", []string{
			"wf.yaml:2:1: YAML syntax error: did not find expected '-' indicator; check indentation and quoting from this line on"}},
		{"empty file", "", []string{
			"wf.yaml:1:1: file is empty; a workflow needs at least `name` and `nodes`"}},
		{"two documents", "name: x\n---\nname: y\n", []string{
			"wf.yaml:2:1: a workflow file holds one YAML document; remove the `---` and what follows, or move it to its own file"}},
		{"not a mapping", "- a\n", []string{
			"wf.yaml:1:1: a workflow must be a mapping with `name` and `nodes` at the top level"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w, err := Parse("wf.yaml", []byte(tt.src))
			if w != nil {
				t.Errorf("Parse returned a workflow for an invalid file")
			}
			assertErrors(t, err, tt.want)
		})
	}
}

func assertErrors(t *testing.T, err error, want []string) {
	t.Helper()
	var es Errors
	if !errors.As(err, &es) {
		t.Fatalf("error %v (%T) is not Errors", err, err)
	}
	if !errors.Is(err, ErrInvalid) {
		t.Errorf("errors.Is(err, ErrInvalid) = false")
	}
	if got := err.Error(); got != strings.Join(want, "\n") {
		t.Errorf("errors:\n%s\nwant:\n%s", got, strings.Join(want, "\n"))
	}
}

// A file saved with old Mac (CR) or Unicode line breaks is reported on the lines YAML sees.
func TestParseReportsLinesAcrossLineBreakStyles(t *testing.T) {
	for name, src := range map[string]string{
		"CR":   "name: x\rnodes: 0\r",
		"CRLF": "name: x\r\nnodes: 0\r\n",
		"NEL":  "name: x\u0085nodes: 0",
		"LS":   "name: x\u2028nodes: 0",
	} {
		_, err := Parse("f.yaml", []byte(src))
		if err == nil || !strings.HasPrefix(err.Error(), "f.yaml:2:8: `nodes` must be a non-empty list") {
			t.Errorf("%s: got %v, want the error at f.yaml:2:8", name, err)
		}
	}
}
