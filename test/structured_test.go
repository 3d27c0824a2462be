package test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// triageWorkflow branches on an agent's structured answer: the schema is what the CLI is asked for
// (claude --json-schema, codex --output-schema) and what the answer is checked against.
const triageWorkflow = `name: triage
nodes:
  - id: judge
    prompt: "Judge the change: approve or reject it, and say why."
    output_format:
      type: object
      properties:
        verdict: {type: string, enum: [approve, reject]}
        reason: {type: string}
      required: [verdict, reason]
  - id: ship
    depends_on: [judge]
    when: $judge.output.verdict == 'approve'
    bash: 'echo "shipping: $judge.output.reason"'
  - id: hold
    depends_on: [judge]
    when: $judge.output.verdict == 'reject'
    bash: 'echo "held: $judge.output.reason"'
`

// runStatus is the part of `bot workflow status --json` these tests read.
type runStatus struct {
	State     string `json:"state"`
	LastError *struct {
		Node, Message string
	} `json:"last_error"`
	Nodes []struct {
		ID, State, Reason string
	} `json:"nodes"`
}

func (b *aiBot) triage(answer string) (string, runStatus) {
	b.t.Helper()
	if err := os.WriteFile(filepath.Join(b.env["WORKFLOWS_DIR"], "triage.yaml"), []byte(triageWorkflow), 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.api.SetStructuredAnswer(answer)
	id, _ := b.start("triage --force") // a failed run of triage before this one is left as it is
	out, _ := b.run("workflow", "status", "--json", id)
	var st runStatus
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		b.t.Fatalf("status --json: %v\n%s", err, out)
	}
	return id, st
}

func (st runStatus) node(id string) (state, reason string) {
	for _, n := range st.Nodes {
		if n.ID == id {
			return n.State, n.Reason
		}
	}
	return "", ""
}

// TestRealCLIStructuredOutputRoutes: a schema-valid answer from the real CLI routes the run through
// `when` on its fields, and the fields reach the shell.
func TestRealCLIStructuredOutputRoutes(t *testing.T) {
	t.Parallel()
	forEachCLI(t, func(t *testing.T, b *aiBot) {
		for verdict, want := range map[string]struct{ ran, skipped, says string }{
			"approve": {"ship", "hold", "shipping: tests pass"},
			"reject":  {"hold", "ship", "held: tests pass"},
		} {
			id, st := b.triage(`{"verdict": "` + verdict + `", "reason": "tests pass"}`)
			if st.State != "completed" {
				t.Fatalf("%s: run %s is %s, want completed: %+v", verdict, id, st.State, st.LastError)
			}
			if s, _ := st.node(want.ran); s != "completed" {
				t.Errorf("%s: node %s is %s, want completed", verdict, want.ran, s)
			}
			if s, reason := st.node(want.skipped); s != "skipped" || !strings.Contains(reason, "$judge.output.verdict == '") {
				t.Errorf("%s: node %s is %s (%s), want skipped by its condition", verdict, want.skipped, s, reason)
			}
			logs, _ := b.run("workflow", "logs", id, want.ran)
			wantIn(t, verdict+" "+want.ran+"'s output", logs, want.says)
			judge, _ := b.run("workflow", "logs", id, "judge")
			var got map[string]string
			if err := json.Unmarshal([]byte(judge), &got); err != nil || got["verdict"] != verdict || got["reason"] != "tests pass" {
				t.Errorf("judge's output is %q (%v), want the structured answer", judge, err)
			}
		}
	})
}

// TestRealCLIStructuredOutput: an answer that does not match the schema, or a prose answer, fails
// the node naming what is wrong; nothing downstream runs.
func TestRealCLIStructuredOutput(t *testing.T) {
	t.Parallel()
	forEachCLI(t, func(t *testing.T, b *aiBot) {
		for answer, want := range map[string]string{
			`{"verdict": "maybe", "reason": "unsure"}`: "at /verdict: value must be one of 'approve', 'reject'",
			`{"verdict": "approve"}`:                   "missing property 'reason'",
			"":                                         "without the structured answer",
		} {
			id, st := b.triage(answer)
			if st.State != "failed" || st.LastError == nil || st.LastError.Node != "judge" {
				t.Errorf("answer %q: run %s is %s (%+v), want failed at judge", answer, id, st.State, st.LastError)
				continue
			}
			t.Logf("%s, answer %q: %s", b.name, answer, st.LastError.Message)
			if b.name == "claude" && answer != "" {
				want = claudeSays[answer] // Claude Code checks the tool's input itself, in its own words
			}
			if !strings.Contains(st.LastError.Message, want) {
				t.Errorf("answer %q: the failure says %q, want %q", answer, st.LastError.Message, want)
			}
			for _, n := range []string{"ship", "hold"} {
				if s, _ := st.node(n); s == "completed" {
					t.Errorf("answer %q: node %s ran after a failed judge", answer, n)
				}
			}
		}
	})
}

// claudeSays is how Claude Code refuses the schema-invalid answers: it checks the StructuredOutput
// tool's input against the schema, tells the model, and the turn ends without a structured answer.
var claudeSays = map[string]string{
	`{"verdict": "maybe", "reason": "unsure"}`: "Claude Code refused the structured answers it was given: Output does not match required schema: /verdict: must be equal to one of the allowed values",
	`{"verdict": "approve"}`:                   "Claude Code refused the structured answers it was given: Output does not match required schema",
}
