package workflow

import (
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"threadflow/testkit"
	"time"
)

// archonFixture is Archon pinned at 3d9af974 (test/testdata/archon/README.md).
const archonFixture = "../test/testdata/archon/.archon/workflows"

// archonProviderSmokeTests are the fixture's provider smoke tests for pi, copilot and minimax: the
// issue says to refuse them for their provider.
var archonProviderSmokeTests = []string{"archon-test-pi", "e2e-copilot-abort", "e2e-copilot-all-nodes-smoke",
	"e2e-minimax-smoke", "e2e-pi-all-nodes-smoke", "e2e-pi-smoke", "minimax-isolate", "minimax-seq", "minimax-smoke"}

// Every file of Archon's defaults/ and test-workflows/ loads, or is refused only for reasons
// docs/archon.md lists. Of the files for claude and codex (all but the 9 provider smoke tests),
// at least 90% load: 30 of 33, the 3 others refused for `skills` and `mcp`.
func TestArchonRepositoryLoadsOrIsRefusedForDocumentedReasons(t *testing.T) {
	t.Parallel()
	doc := readDoc(t, "../docs/archon.md")
	cat, errs := Discover("", []string{archonFixture})
	byFile := map[string]Errors{}
	for _, e := range errs {
		key := strings.TrimSuffix(filepath.Base(e.File), ".yaml")
		byFile[key] = append(byFile[key], e)
	}
	files := fixtureFiles(t)
	if len(files) != 42 {
		t.Fatalf("the fixture has %d files in defaults/ and test-workflows/, want Archon's 42", len(files))
	}
	var loaded, refused []string
	for _, f := range files {
		es := byFile[f]
		if len(es) == 0 {
			if cat.Origin(f) != Origin(archonFixture) {
				t.Errorf("%s: no problem reported and not in the catalog", f)
			}
			loaded = append(loaded, f)
			continue
		}
		if len(es) != 1 || len(es[0].Refused) == 0 {
			t.Errorf("%s: want one refusal message, got %v", f, es)
			continue
		}
		for _, r := range refusalReasons(es[0]) {
			if !strings.Contains(doc, r) {
				t.Errorf("%s: refused for a reason docs/archon.md does not list: %q", f, r)
			}
		}
		smoke := slices.Contains(archonProviderSmokeTests, f)
		if smoke != slices.Contains(es[0].Refused, "provider") {
			t.Errorf("%s: refused for %v; only the provider smoke tests are refused for their provider", f, es[0].Refused)
		}
		if !smoke {
			refused = append(refused, f+" "+strings.Join(es[0].Refused, ","))
		}
	}
	counted := len(files) - len(archonProviderSmokeTests)
	t.Logf("of %d files for claude and codex: %d load, %d refused %v", counted, len(loaded), len(refused), refused)
	if need := int(math.Ceil(0.9 * float64(counted))); len(loaded) < need {
		t.Errorf("%d of %d files for claude and codex load; want at least %d", len(loaded), counted, need)
	}
}

// fixtureFiles lists the fixture's workflow files by name without .yaml.
func fixtureFiles(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, dir := range []string{"defaults", "test-workflows"} {
		entries, err := os.ReadDir(filepath.Join(archonFixture, dir))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			out = append(out, strings.TrimSuffix(e.Name(), ".yaml"))
		}
	}
	sort.Strings(out)
	return out
}

// refusalReasons are the reasons a refusal message gives, one per refused field.
func refusalReasons(e *Error) []string {
	var out []string
	for _, f := range e.Refused {
		out = append(out, archonRefusals[f])
		if !strings.Contains(e.Msg, out[len(out)-1]) {
			out = append(out, "(the message does not give the reason of "+f+")")
		}
	}
	return out
}

func readDoc(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// docs/archon.md has a row for every Archon field and node kind the decoder knows, and every
// refusal reason the decoder can give.
func TestArchonDocsListEveryFieldAndReason(t *testing.T) {
	t.Parallel()
	doc := readDoc(t, "../docs/archon.md")
	for _, f := range slices.Concat(archonWorkflowFields, archonNodeFields, archonKinds) {
		if f == archonKey {
			continue
		}
		if !strings.Contains(doc, "| `"+f+"`") && !strings.Contains(doc, ", `"+f+"`") && !strings.Contains(doc, "(with `"+f+"`)") {
			t.Errorf("docs/archon.md has no row for `%s`", f)
		}
	}
	for f, r := range archonRefusals {
		if !strings.Contains(doc, r) {
			t.Errorf("docs/archon.md does not give the reason for refusing %s: %q", f, r)
		}
	}
}

// The fixture's workflows are found as Archon finds them: one folder level deep, not deeper.
func TestArchonDiscoveryDepth(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write(t, root, ".archon/workflows/top.yaml", "name: top\nnodes:\n  - id: a\n    bash: echo top\n")
	write(t, root, ".archon/workflows/group/one.yml", "name: one\nnodes:\n  - id: a\n    bash: echo one\n")
	write(t, root, ".archon/workflows/group/deeper/two.yaml", "name: two\nnodes:\n  - id: a\n    bash: echo two\n")
	cat, errs := Discover("", []string{filepath.Join(root, ".archon", "workflows")})
	if len(errs) != 0 {
		t.Fatal(errs)
	}
	for name, want := range map[string]bool{"top": true, "one": true, "two": false} {
		if _, ok := cat.Get(name); ok != want {
			t.Errorf("workflow %s loaded: %v, want %v", name, ok, want)
		}
	}
	if w, _ := cat.Get("top"); w.Dialect != DialectArchon || w.Node("a").Shell != "bash" || w.Node("a").Timeout != archonSubprocessTimeout {
		t.Errorf("top was not read as Archon's: %+v", w.Node("a"))
	}
}

func write(t *testing.T, root, rel, content string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// archonRepoFS is a small Archon repository for the translation tests.
func archonRepoFS(t *testing.T, files map[string]string) string {
	t.Helper()
	root := t.TempDir()
	for rel, content := range files {
		write(t, root, rel, content)
	}
	return filepath.Join(root, ".archon", "workflows")
}

// A run keeps the command files, includes and config it started with: the frozen source parses
// alone, after the repository changed, to the same prompts.
func TestArchonRunKeepsWhatItStartedWith(t *testing.T) {
	t.Parallel()
	dir := archonRepoFS(t, map[string]string{
		".archon/config.yaml":                  "worktree:\n  baseBranch: trunk\n",
		".archon/commands/defaults/plan.md":    "Plan $USER_MESSAGE against $BASE_BRANCH (run $WORKFLOW_ID).\n",
		".archon/workflows/block.yaml":         "name: block\ndescription: a block\nnodes:\n  - id: check\n    bash: echo checked\n",
		".archon/workflows/defaults/main.yaml": "name: main\ndescription: main\nnodes:\n  - id: plan\n    command: plan\n  - id: rev\n    include: block\n    depends_on: [plan]\n",
	})
	cat, errs := Discover("", []string{dir})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	w, _ := cat.Get("main")
	want := "Plan $ARGUMENTS against trunk (run $RUN_ID).\n"
	if got := w.Node("plan").Prompt; got != want {
		t.Fatalf("plan's prompt = %q, want %q", got, want)
	}
	for _, f := range []string{".archon/commands/defaults/plan.md", ".archon/workflows/block.yaml", ".archon/config.yaml"} {
		if err := os.Remove(filepath.Join(filepath.Dir(filepath.Dir(dir)), f)); err != nil {
			t.Fatal(err)
		}
	}
	again, err := Parse("run x", w.Source)
	if err != nil {
		t.Fatalf("the frozen source does not parse alone: %v", err)
	}
	if again.Node("plan").Prompt != want || again.Node("rev__check") == nil || again.Dialect != DialectArchon {
		t.Errorf("the frozen source parsed to %+v", again.Nodes)
	}
	if !strings.HasPrefix(string(w.Source), "name: main\n") {
		t.Errorf("the frozen source does not start with the file's own lines: %.40q", w.Source)
	}
}

// A file with several fields that cannot be honoured gets one message naming each with its line
// and why, at the first one; the summary counts it by field.
func TestArchonRefusalIsOneMessagePerFile(t *testing.T) {
	t.Parallel()
	dir := archonRepoFS(t, map[string]string{".archon/workflows/x.yaml": `name: x
description: several refusals
nodes:
  - id: a
    prompt: hi
    skills: [one]
  - id: b
    prompt: hi
    provider: pi
    mcp: servers.json
`})
	cat, errs := Discover("", []string{dir})
	if len(errs) != 1 {
		t.Fatalf("want one message, got %v", errs)
	}
	e := errs[0]
	if e.Line != 6 || e.Col != 5 || !slices.Equal(e.Refused, []string{"skills", "provider", "mcp"}) {
		t.Errorf("message at %d:%d refusing %v: %s", e.Line, e.Col, e.Refused, e.Msg)
	}
	for _, want := range []string{"`skills` (line 6): " + archonRefusals["skills"], "`provider` (line 9): " + archonRefusals["provider"], "`mcp` (line 10): " + archonRefusals["mcp"]} {
		if !strings.Contains(e.Msg, want) {
			t.Errorf("the message does not say %q:\n%s", want, e.Msg)
		}
	}
	dir = archonRepoFS(t, map[string]string{
		".archon/workflows/block.yaml": "name: block\ndescription: b\nnodes:\n  - id: p\n    prompt: hi\n    skills: [one]\n",
		".archon/workflows/main.yaml":  "name: main\ndescription: m\nnodes:\n  - id: r\n    include: block\n",
	})
	_, inc := Discover("", []string{dir})
	mainRefused := 0
	for _, e := range inc {
		if filepath.Base(e.File) != "main.yaml" {
			continue
		}
		mainRefused++
		if e.Line != 1 || !strings.Contains(e.Msg, "`skills` (line 6 of "+filepath.Join(dir, "block.yaml")+")") {
			t.Errorf("a refusal in an included file: %v", e)
		}
	}
	if mainRefused != 1 {
		t.Errorf("the including file got %d messages, want 1: %v", mainRefused, inc)
	}
	if got := Summarize(cat, errs).String(); !strings.Contains(got, "1 refused (by field: mcp 1, provider 1, skills 1), 0 with other problems") {
		t.Errorf("summary = %q", got)
	}
}

// Each Archon field is translated as docs/archon.md says.
func TestArchonFieldsTranslate(t *testing.T) {
	t.Parallel()
	dir := archonRepoFS(t, map[string]string{".archon/workflows/x.yaml": `name: x
description: fields
model: large
nodes:
  - id: scan
    bash: 'git log --oneline $BASE_BRANCH.. > "$ARTIFACTS_DIR/log"; echo $DOCS_DIR'
    timeout: 1500
    retry: {max_attempts: 2, delay_ms: 1000, on_error: all}
  - id: a
    depends_on: [scan]
    prompt: "Look at $scan.output"
    idle_timeout: 90000
    effort: minimal
    allowed_tools: []
  - id: b
    depends_on: [scan]
    prompt: "And this"
    provider: codex
    model: small
  - id: c
    depends_on: [a, b]
    prompt: "Join"
    output_type: summary
  - id: gate
    depends_on: [c]
    approval: {message: "Ship $c.output?", capture_response: true}
`})
	cat, errs := Discover("", []string{dir})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	w, _ := cat.Get("x")
	scan, a, b, c, gate := w.Node("scan"), w.Node("a"), w.Node("b"), w.Node("c"), w.Node("gate")
	if scan.Shell != "bash" || scan.Timeout != 1500*time.Millisecond || scan.Retry != (Retry{MaxAttempts: 3, Delay: time.Second, On: RetryAll}) {
		t.Errorf("scan: shell %q, timeout %s, retry %+v", scan.Shell, scan.Timeout, scan.Retry)
	}
	if !strings.HasPrefix(scan.Bash, `BASE_BRANCH="$(git symbolic-ref`) || !strings.Contains(scan.Bash, "DOCS_DIR='docs/'") {
		t.Errorf("scan's script does not set $BASE_BRANCH and $DOCS_DIR first:\n%s", scan.Bash)
	}
	if a.IdleTimeout != 90*time.Second || a.Effort != "minimal" || !a.ToolsSet || len(a.Tools) != 0 || a.Provider != "claude" || a.Model != "opus" {
		t.Errorf("a: %+v", a)
	}
	if a.Context != ContextFresh || c.Context != ContextShared {
		t.Errorf("contexts by layer: a (shares its layer) %s, c (alone) %s", a.Context, c.Context)
	}
	if a.Retry != (Retry{MaxAttempts: 3, Delay: 3 * time.Second, On: RetryTransient}) {
		t.Errorf("an AI node's default retry = %+v", a.Retry)
	}
	if b.Provider != "codex" || b.Model != "gpt-5.5" || b.Effort != "minimal" {
		t.Errorf("b (codex, small) = %s %s %s", b.Provider, b.Model, b.Effort)
	}
	if c.OutputType != "summary" || gate.Approval == nil || !gate.Approval.CaptureResponse || gate.Approval.Message != "Ship $c.output?" {
		t.Errorf("c %q, gate %+v", c.OutputType, gate.Approval)
	}
	if got := w.Graph().Inputs(a); len(got) != 1 || !got["scan"] {
		t.Errorf("a reads %v", got)
	}
}

// What Archon means differently, or not at all here, is refused with its reason, never dropped.
func TestArchonRefusesWhatWouldChangeMeaning(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct{ node, field string }{
		"tools on codex":        {"    provider: codex\n    prompt: hi\n    allowed_tools: [Read]\n", "allowed_tools"},
		"hooks on codex":        {"    provider: codex\n    prompt: hi\n    hooks: {PreToolUse: [{response: {systemMessage: x}}]}\n", "hooks"},
		"hook that allows":      {"    prompt: hi\n    hooks: {PreToolUse: [{matcher: Bash, response: {hookSpecificOutput: {hookEventName: PreToolUse, permissionDecision: allow}}}]}\n", "hooks"},
		"hook that stops":       {"    prompt: hi\n    hooks: {Stop: [{response: {systemMessage: x}}]}\n", "hooks"},
		"timeout on AI":         {"    prompt: hi\n    timeout: 1000\n", "timeout"},
		"context resume":        {"    prompt: hi\n    context: {resume: other}\n", "context.resume"},
		"unmapped variable":     {"    prompt: \"Use $PLAN\"\n", "variable"},
		"missing command":       {"    command: nowhere\n", "command"},
		"missing include":       {"    include: nowhere\n", "include"},
		"loop_group of prompts": {"    loop_group: {max_iterations: 2, until_bash: 'true', nodes: [{id: p, prompt: hi}]}\n", "loop_group"},
		"numeric when":          {"    prompt: hi\n    when: \"$other.output > '3'\"\n", "when"},
		"approval decisions":    {"    approval: {message: \"ok?\", decisions: [{id: approve}]}\n", "decisions"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := archonRepoFS(t, map[string]string{".archon/workflows/x.yaml": "name: x\ndescription: d\nnodes:\n  - id: other\n    bash: echo\n  - id: n\n    depends_on: [other]\n" + tc.node})
			_, errs := Discover("", []string{dir})
			if len(errs) != 1 || !slices.Contains(errs[0].Refused, tc.field) {
				t.Fatalf("want %s refused, got %v", tc.field, errs)
			}
		})
	}
}

// The hooks Archon writes as static responses become Claude Code command hooks that print them.
func TestArchonHooksBecomeCommandsThatPrintTheResponse(t *testing.T) {
	t.Parallel()
	dir := archonRepoFS(t, map[string]string{".archon/workflows/x.yaml": `name: x
description: hooks
nodes:
  - id: n
    prompt: hi
    hooks:
      PreToolUse:
        - matcher: "Write|Edit"
          timeout: 5
          response:
            hookSpecificOutput: {hookEventName: PreToolUse, permissionDecision: deny, permissionDecisionReason: "it's read-only"}
`})
	cat, errs := Discover("", []string{dir})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	w, _ := cat.Get("x")
	var settings struct {
		Hooks map[string][]claudeHook `json:"hooks"`
	}
	if err := json.Unmarshal([]byte(w.Node("n").Hooks), &settings); err != nil {
		t.Fatal(err)
	}
	h := settings.Hooks["PreToolUse"]
	if len(h) != 1 || h[0].Matcher != "Write|Edit" || len(h[0].Hooks) != 1 || h[0].Hooks[0].Timeout != 5 {
		t.Fatalf("hooks = %+v", settings.Hooks)
	}
	out, err := exec.Command("sh", "-c", h[0].Hooks[0].Command).Output()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"hookSpecificOutput":{"hookEventName":"PreToolUse","permissionDecision":"deny","permissionDecisionReason":"it's read-only"}}` + "\n"
	if string(out) != want {
		t.Errorf("the hook prints %q, want %q", out, want)
	}
}

// The loop_group translation runs the body, then the check, and stops at max_iterations.
func TestArchonLoopGroupScriptRunsBodyThenCheck(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("bash"); err != nil {
		testkit.Missing(t, "bash is not installed; Archon's bash nodes need it")
	}
	for _, tc := range []struct {
		limit    int
		wantOut  string
		wantFail bool
	}{{5, "3\n", false}, {2, "", true}} {
		dir := archonRepoFS(t, map[string]string{".archon/workflows/x.yaml": fmt.Sprintf(`name: x
description: loop_group
nodes:
  - id: count
    loop_group:
      max_iterations: %d
      until_bash: 'test "$(wc -l < ./n)" -ge 3'
      nodes:
        - id: tick
          bash: echo tick >> ./n && wc -l < ./n
`, tc.limit)})
		cat, errs := Discover("", []string{dir})
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		w, _ := cat.Get("x")
		cmd := exec.Command("bash", "-c", ShellScript(w.Node("count").Bash))
		cmd.Dir = t.TempDir()
		out, err := cmd.Output()
		if (err != nil) != tc.wantFail || !tc.wantFail && string(out) != tc.wantOut {
			t.Errorf("max_iterations %d: output %q, error %v", tc.limit, out, err)
		}
	}
}

// An Archon loop ends on its signal by Archon's rule; ours ends on the signal anywhere.
func TestArchonLoopSignalIsArchonsRule(t *testing.T) {
	t.Parallel()
	archon, ours := &Loop{Until: "COMPLETE", ArchonSignal: true}, &Loop{Until: "COMPLETE"}
	for out, want := range map[string]bool{
		"all done <promise>COMPLETE</promise> bye": true,
		"<Done> COMPLETE </done>":                  true,
		"<done>COMPLETE</promise>":                 false,
		"work finished.\nCOMPLETE\nthanks":         true,
		"finished: COMPLETE.":                      true,
		"not COMPLETE yet":                         false,
		"":                                         false,
	} {
		if got := archon.Done(out); got != want {
			t.Errorf("Archon's rule on %q = %v, want %v", out, got, want)
		}
		if got := ours.Done(out); got != strings.Contains(out, "COMPLETE") {
			t.Errorf("our rule on %q = %v", out, got)
		}
	}
}

// A repository read before is translated again only when one of its files changed (the bot reads
// its workflow directories every 2 seconds); a changed command file is seen at the next reading.
func TestArchonRepositoryIsReadAgainWhenAFileChanges(t *testing.T) {
	t.Parallel()
	dir := archonRepoFS(t, map[string]string{
		".archon/commands/ask.md":      "first text\n",
		".archon/workflows/asker.yaml": "name: asker\ndescription: d\nnodes:\n  - id: ask\n    command: ask\n",
	})
	prompt := func() string {
		t.Helper()
		cat, errs := Discover("", []string{dir})
		if len(errs) > 0 {
			t.Fatal(errs)
		}
		w, _ := cat.Get("asker")
		return w.Node("ask").Prompt
	}
	first := prompt()
	again := prompt()
	cmd := filepath.Join(filepath.Dir(dir), "commands", "ask.md")
	if err := os.WriteFile(cmd, []byte("other text\n"), 0o644); err != nil { // same size
		t.Fatal(err)
	}
	later := time.Now().Add(time.Minute)
	if err := os.Chtimes(cmd, later, later); err != nil {
		t.Fatal(err)
	}
	if first != "first text\n" || again != first || prompt() != "other text\n" {
		t.Errorf("prompts %q, %q, then %q", first, again, prompt())
	}
}
