package workflow

import (
	"os"
	"strings"
	"testing"
)

// The validation example in docs/workflows.md must show exactly what Parse reports.
func TestDocsValidationExampleIsCurrent(t *testing.T) {
	t.Parallel()
	blocks := docBlocks(t, "## Validation", 2)
	if len(blocks) < 2 {
		t.Fatal("Validation section needs a yaml block and an output block")
	}
	_, err := Parse("deploy.yaml", []byte(blocks[0]))
	if err == nil {
		t.Fatal("the example is valid")
	}
	if got, want := err.Error(), strings.TrimSpace(blocks[1]); got != want {
		t.Errorf("docs show:\n%s\nParse reports:\n%s", want, got)
	}
}

// docBlocks returns the contents of the first n ``` blocks of docs/workflows.md after heading.
func docBlocks(t *testing.T, heading string, n int) []string {
	t.Helper()
	doc, err := os.ReadFile("../docs/workflows.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), heading)
	if !ok {
		t.Fatalf("docs/workflows.md has no %q section", heading)
	}
	return fencedBlocks(section, n)
}

// fencedBlocks returns the contents of the first n ``` blocks of md.
func fencedBlocks(md string, n int) []string {
	var out []string
	for len(out) < n {
		_, rest, ok := strings.Cut(md, "```")
		if !ok {
			break
		}
		_, rest, _ = strings.Cut(rest, "\n") // skip the info string
		body, after, ok := strings.Cut(rest, "```")
		if !ok {
			break
		}
		out = append(out, body)
		md = after
	}
	return out
}

// The approval gate example in docs/workflows.md must be a valid node with every field it lists.
func TestDocsApprovalExampleParses(t *testing.T) {
	t.Parallel()
	blocks := docBlocks(t, "## Approval gates", 1)
	if len(blocks) != 1 {
		t.Fatal("the Approval gates section has no example")
	}
	w, err := Parse("doc.yaml", []byte("name: x\nnodes:\n  - id: check\n    bash: echo ok\n"+blocks[0]))
	if err != nil {
		t.Fatalf("the documented example does not parse: %v", err)
	}
	for _, field := range approvalFields {
		if !strings.Contains(blocks[0], "      "+field+":") {
			t.Errorf("the example does not show approval.%s", field)
		}
	}
	if a := w.Node("confirm").Approval; a.Policy.Required != 2 || !a.Policy.Admins || a.Policy.AllowSelfApproval || a.RemindAfter == 0 {
		t.Errorf("the example parsed as %+v", *a)
	}
}

// The typed inputs example in docs/workflows.md must be a valid workflow with typed inputs and a
// concurrency group reading them.
func TestDocsInputsExampleIsValid(t *testing.T) {
	t.Parallel()
	blocks := docBlocks(t, "## Inputs", 1)
	w, err := Parse("release.yaml", []byte(blocks[0]))
	if err != nil {
		t.Fatal(err)
	}
	if !w.Typed() || w.Concurrency == nil || len(w.Inputs) != 3 {
		t.Fatalf("the example has typed %v, concurrency %v, %d inputs", w.Typed(), w.Concurrency, len(w.Inputs))
	}
}

// The script-node and output_format examples in docs/workflows.md are valid workflows.
func TestDocsScriptAndStructuredExamplesParse(t *testing.T) {
	t.Parallel()
	for _, heading := range []string{"### Script nodes", "### Structured answers"} {
		blocks := docBlocks(t, heading, 1)
		if len(blocks) != 1 {
			t.Fatalf("%s has no example", heading)
		}
		src := "name: example\nnodes:\n" + indent(blocks[0], "  ")
		if heading == "### Script nodes" { // the example reads the output of a node before it
			src = "name: example\nnodes:\n  - id: tests\n    bash: make test\n" + indent(blocks[0], "  ")
		}
		if _, err := Parse("example.yaml", []byte(src)); err != nil {
			t.Errorf("the example of %s does not parse: %v\n%s", heading, err, src)
		}
	}
}

func indent(s, by string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	for i, l := range lines {
		lines[i] = by + l
	}
	return strings.Join(lines, "\n") + "\n"
}
