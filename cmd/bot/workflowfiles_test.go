package main

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// A YAML syntax error is reported where the text breaks, with what is wrong there in plain words
// (issue 26): yaml.v3 itself names the line where the enclosing block began, and no column.
func TestValidateReportsYAMLSyntaxErrorsWhereTheyAre(t *testing.T) {
	const head = "name: x\nnodes:\n  - id: a\n"
	tests := []struct {
		name string
		src  string
		want string // after "FILE:"
	}{
		{"a top-level key indented", "name: x\n  description: d\nnodes:\n  - id: a\n    bash: echo\n",
			"2:3: this line is indented 2 spaces, more than `name` on line 1 (0 spaces); line it up with the key it belongs to"},
		{"a node field indented less than the node's", head + "    bash: echo\n   description: hi\n",
			"5:4: this line is indented 3 spaces, less than `bash` on line 4 (4 spaces) and more than the `-` on line 3 (2 spaces); line it up with the key it belongs to"},
		{"a node field indented more than the node's", "name: x\ndescription: d\nnodes:\n  - id: a\n     bash: echo\n",
			"5:6: this line is indented 5 spaces, more than `id` on line 4 (4 spaces); line it up with the key it belongs to"},
		{"a list item indented less than the list", "name: x\nnodes:\n - id: a\n   bash: echo\n  - id: b\n    bash: echo\n",
			"5:3: this line is indented 2 spaces, less than `bash` on line 4 (3 spaces) and more than the `-` on line 3 (1 space); line it up with the key it belongs to"},
		{"a nested field indented more", head + "    retry:\n      max_attempts: 2\n       delay: 1s\n    bash: echo\n",
			"6:8: this line is indented 7 spaces, more than `max_attempts` on line 5 (6 spaces); line it up with the key it belongs to"},
		{"a nested field indented less", head + "    retry:\n      max_attempts: 2\n     delay: 1s\n    bash: echo\n",
			"6:6: this line is indented 5 spaces, less than `max_attempts` on line 5 (6 spaces) and more than `retry` on line 4 (4 spaces); line it up with the key it belongs to"},
		{"a node field lined up with the list", head + "    bash: echo\n  description\n",
			"5:3: this line is indented 2 spaces, like the `-` on line 3, but does not start with `- `; start it with `- ` for a new list item, or indent it 4 spaces like `bash` on line 4 to add it to that item"},
		{"a tab indenting a field", head + "\tbash: echo\n",
			"4:1: a tab character: YAML indents with spaces only; replace it with spaces"},
		{"a tab after spaces", head + "  \tbash: echo\n",
			"4:3: a tab character: YAML indents with spaces only; replace it with spaces"},
		{"a tab after a list dash", "name: x\nnodes:\n  -\tid: a\n    bash: echo\n",
			"3:4: a tab character: YAML indents with spaces only; replace it with spaces"},
		{"a tab indenting a key's value", head + "    bash:\n\t\techo\n",
			"5:1: a tab character: YAML indents with spaces only; replace it with spaces"},
		{"a tab in a block of script", head + "    bash: |\n      echo\n\t  more\n",
			"6:1: a tab character: YAML indents with spaces only; replace it with spaces"},
		{"an unclosed double quote", head + "    bash: \"echo hi\n  - id: b\n    bash: echo\n",
			"4:11: the quoted text that starts here has no closing `\"`; end it with `\"`"},
		{"an unclosed single quote", head + "    bash: 'echo hi\n",
			"4:11: the quoted text that starts here has no closing `'`; end it with `'`"},
		{"an unclosed flow list", head + "    depends_on: [b, c\n    bash: echo\n",
			"4:17: this `[` is never closed; end the list with `]`"},
		{"an unclosed flow list on several lines", head + "    depends_on: [b,\n      c\n    bash: echo\n",
			"4:17: this `[` is never closed; end the list with `]`"},
		{"an unclosed flow mapping", head + "    retry: {max_attempts: 2\n    bash: echo\n",
			"4:12: this `{` is never closed; end the mapping with `}`"},
		{"a stray colon in a value", head + "    bash: echo: hi\n",
			"4:15: a second `: ` on this line; a value that contains `: ` must be quoted, as in `bash: \"echo: hi\"`"},
		{"a colon without a key", head + "    bash: echo\n    : hi\n",
			"5:5: a `:` with no key before it; write the field's name before the `:`"},
		{"a key without a colon", head + "    bash echo\n    timeout: 5s\n",
			"4:5: this line has no `:`; write a field as `key: value`"},
		{"text after a closing quote", "name: \"x\" y\nnodes:\n  - id: a\n    bash: echo\n",
			"1:11: text after the closing quote; put the whole value inside the quotes"},
		{"a value starting with a backtick", head + "    bash: `echo`\n",
			"4:11: a value cannot start with a backtick in YAML; put the value in quotes"},
		{"a list item among fields", head + "    bash: echo\n    - x\n",
			"5:5: a list item among the fields of a mapping; a list goes on the lines after its key (`key:`), indented more than the key"},
		{"a list on its key's line", "name: x\nnodes: - a\n",
			"2:8: a list cannot start on the line of its key; put each `- ` item on a line of its own, indented under the key"},
		{"a duplicate key", "name: x\nname: y\nnodes:\n  - id: a\n    bash: echo\n",
			"2:1: field `name` is set twice in the workflow (first at line 1); keep one"},
		{"Windows line ends", "name: x\r\nnodes:\r\n  - id: a\r\n    bash: echo\r\n   description: hi\r\n",
			"5:4: this line is indented 3 spaces, less than `bash` on line 4 (4 spaces) and more than the `-` on line 3 (2 spaces); line it up with the key it belongs to"},
	}
	dir := t.TempDir()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			file := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+".yaml")
			writeFile(t, file, tt.src)
			b := runBot(t, cliEnv(t), "workflow", "validate", file)
			code := exitCode(b.result(t))
			if want := file + ":" + tt.want + "\n"; code != 1 || b.stdout.String() != want {
				t.Errorf("bot workflow validate = exit %d, stdout:\n%s\nwant exit 1 and:\n%s", code, b.stdout, want)
			}
		})
	}
}

// A tab separating a key from its value is valid YAML (only indentation must be spaces): such a file
// is a valid workflow.
func TestValidateAcceptsATabAfterAKey(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tabbed.yaml")
	writeFile(t, file, "name:\ttabbed\nnodes:\n  - id:\ta\n    bash:\techo hi\n")
	out, code := cli(t, cliEnv(t), "workflow", "validate", file)
	if code != 0 || out != file+": ok (workflow tabbed, 1 nodes)\n" {
		t.Errorf("bot workflow validate = exit %d:\n%s", code, out)
	}
}

// Every terminal command reads the workflow files. The full list of problems is printed when it
// changed since a terminal command last printed it, and otherwise one line says how many files are
// left out; `bot workflow validate` prints everything every time (issue 26).
func TestTerminalCommandsReportInvalidWorkflowFilesOncePerChange(t *testing.T) {
	env := cliEnv(t)
	typo := addWorkflow(t, env, "typo", brokenFlow)
	const full = "Workflow files with problems are left out until fixed"
	problem := typo + ":4:5: unknown field `bsh` in a node; did you mean `bash`?"
	stderr := func(args ...string) string {
		t.Helper()
		b := runBot(t, env, args...)
		if err := b.result(t); err != nil {
			t.Fatalf("bot %s: %v; stderr:\n%s", strings.Join(args, " "), err, b.stderr)
		}
		return b.stderr.String()
	}
	if s := stderr("workflow", "list"); !strings.Contains(s, full) || !strings.Contains(s, problem) {
		t.Fatalf("first command with a broken file, stderr:\n%s\nwant every problem", s)
	}
	reminder := "1 workflow file is not valid and is left out; bot workflow validate shows why.\n"
	for _, args := range [][]string{{"workflow", "runs"}, {"workflow", "list", "--json"}, {"chat", "/workflow list"}} {
		if s := stderr(args...); s != reminder {
			t.Errorf("bot %s with the same problems, stderr:\n%s\nwant only:\n%s", strings.Join(args, " "), s, reminder)
		}
	}
	// validate prints every problem whether or not they were shown.
	b := runBot(t, env, "workflow", "validate")
	if err := b.result(t); exitCode(err) != 1 || !strings.Contains(b.stdout.String(), problem) ||
		b.stderr.String() != "threadflow: 1 workflow file is not valid and is left out until fixed\n" {
		t.Errorf("bot workflow validate = exit %d, stdout:\n%s\nstderr:\n%s", exitCode(err), b.stdout, b.stderr)
	}

	// A second broken file changes the problems: the full list again, once.
	other := addWorkflow(t, env, "other", "name: other\nnodes:\n  - id: a\n    bash: echo\n   timeout: 5s\n")
	if s := stderr("workflow", "runs"); !strings.Contains(s, full) || !strings.Contains(s, problem) || !strings.Contains(s, other+":5:4: this line is indented") {
		t.Errorf("after a second file broke, stderr:\n%s\nwant both files' problems", s)
	}
	if s := stderr("workflow", "runs"); s != "2 workflow files are not valid and are left out; bot workflow validate shows why.\n" {
		t.Errorf("the same two broken files again, stderr:\n%s", s)
	}

	// Fixed: said once, then nothing.
	writeFile(t, typo, "name: typo\nnodes:\n  - id: a\n    bash: echo hi\n")
	writeFile(t, other, "name: other\nnodes:\n  - id: a\n    bash: echo\n")
	if s := stderr("workflow", "runs"); s != "Every workflow file is valid again.\n" {
		t.Errorf("after fixing both files, stderr:\n%s", s)
	}
	if s := stderr("workflow", "runs"); s != "" {
		t.Errorf("nothing broken, stderr:\n%s", s)
	}
	b = runBot(t, env, "workflow", "validate")
	if err := b.result(t); err != nil || b.stdout.String() != "Every workflow file is valid: 6 workflows (bot workflow list shows them).\n" {
		t.Errorf("bot workflow validate = %v, stdout:\n%s", err, b.stdout)
	}
}

// The server reports the problems in its log and on stdout at start and at each change, not at
// each re-read of the files.
func TestServeLogsInvalidWorkflowFilesAtStartAndOnChange(t *testing.T) {
	dir := t.TempDir()
	typo := filepath.Join(dir, "typo.yaml")
	writeFile(t, typo, brokenFlow)
	b := runBot(t, map[string]string{"THREADFLOW_HOME": t.TempDir(), "HTTP_ADDR": "127.0.0.1:0", "WORKFLOWS_DIR": dir, "LOG_LEVEL": "warn", "LOG_FORMAT": "json"})
	waitURL(t, b.stdout, b.done, b.stderr)
	waitLine(t, b, typo+":4:5: unknown field `bsh`")
	writeFile(t, filepath.Join(dir, "other.yaml"), "name: other\nnodes:\n  - id: a\n    bash: echo\n    depends_on: [nope]\n")
	waitLine(t, b, "other.yaml:5:")
	logged := strings.Count(b.stderr.String(), `"msg":"workflow.discover_failed"`)
	if logged != 2 || !strings.Contains(b.stderr.String(), `"files":1,`) || !strings.Contains(b.stderr.String(), `"files":2,`) {
		t.Errorf("log of a server whose workflow files broke twice (%d discover_failed lines):\n%s", logged, b.stderr)
	}
}

// Pointed at Archon's repository, `bot workflow validate` prints one message per refused file and
// ends with a summary: how many loaded, how many files were refused, by field (docs/archon.md).
func TestValidateArchonRepositoryEndsWithASummary(t *testing.T) {
	t.Parallel()
	env := cliEnv(t)
	env["WORKFLOWS_DIR"] = "../../test/testdata/archon/.archon/workflows"
	b := runBot(t, env, "workflow", "validate")
	err := b.result(t)
	lines := strings.Split(strings.TrimSpace(b.stdout.String()), "\n")
	last := lines[len(lines)-1]
	if exitCode(err) != 1 || !strings.HasPrefix(last, "Summary: ") || !strings.Contains(last, " refused (by field: ") || !strings.Contains(last, "provider 9") {
		t.Fatalf("bot workflow validate = exit %d, last line %q", exitCode(err), last)
	}
	refused := 0
	for _, l := range lines {
		if strings.Contains(l, ": refused, this Archon workflow cannot run here as written: ") {
			refused++
		}
	}
	if want := " " + strconv.Itoa(refused) + " refused "; refused == 0 || !strings.Contains(last, want) {
		t.Errorf("%d refusal messages, summary %q", refused, last)
	}

	// Named files that lie in .archon/workflows are read in Archon's dialect too.
	dir := env["WORKFLOWS_DIR"]
	b = runBot(t, env, "workflow", "validate", dir+"/defaults/archon-assist.yaml", dir+"/test-workflows/minimax-smoke.yaml")
	err = b.result(t)
	out := b.stdout.String()
	if exitCode(err) != 1 || !strings.Contains(out, "archon-assist.yaml: ok (workflow archon-assist, 1 nodes)") ||
		!strings.Contains(out, "minimax-smoke.yaml:15:11: refused") || !strings.HasSuffix(out, "Summary: 1 loaded, 1 refused (by field: provider 1), 0 with other problems.\n") {
		t.Errorf("bot workflow validate FILES = exit %d:\n%s", exitCode(err), out)
	}
}
