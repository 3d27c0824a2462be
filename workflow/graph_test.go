package workflow

import (
	"slices"
	"testing"
)

func TestGraph(t *testing.T) {
	t.Parallel()
	w := mustParse(t, "diamond.yaml", []byte(`name: diamond
nodes:
  - id: a
    bash: "true"
  - id: c
    bash: "true"
    depends_on: [a]
  - id: b
    bash: "true"
    depends_on: [a]
  - id: d
    bash: "true"
    depends_on: [b, c]
`))
	g := w.Graph()
	ids := func(nodes []*Node) []string {
		var out []string
		for _, n := range nodes {
			out = append(out, n.ID)
		}
		return out
	}
	if got := ids(g.Dependents("a")); !slices.Equal(got, []string{"c", "b"}) {
		t.Errorf("Dependents(a) = %v, want [c b] (workflow order)", got)
	}
	if got := ids(g.Dependents("d")); len(got) != 0 {
		t.Errorf("Dependents(d) = %v, want none", got)
	}
	if !g.IsSink("d") || g.IsSink("a") || g.IsSink("b") {
		t.Errorf("IsSink: d %v, a %v, b %v; want only d", g.IsSink("d"), g.IsSink("a"), g.IsSink("b"))
	}
	up := g.Upstream(w.Node("d"))
	if len(up) != 3 || !up["a"] || !up["b"] || !up["c"] {
		t.Errorf("Upstream(d) = %v, want a, b and c", up)
	}
	if g.Order("c") != 1 || g.Order("b") != 2 {
		t.Errorf("Order(c), Order(b) = %d, %d; want 1, 2", g.Order("c"), g.Order("b"))
	}
}

// A shell node gets its direct dependencies' outputs and those of ancestors its script names, in
// any of the three spellings; an ancestor it does not name is left out, and so is a node that is
// not upstream even when the script names it.
func TestInputs(t *testing.T) {
	t.Parallel()
	w := mustParse(t, "chain.yaml", []byte(`name: chain
nodes:
  - id: build-app
    bash: "true"
  - id: lint
    bash: "true"
  - id: test
    bash: "true"
    depends_on: [build-app, lint]
  - id: pack
    bash: "true"
    depends_on: [test]
  - id: plain
    bash: "true"
    depends_on: [pack]
  - id: by-ref
    bash: echo "$build-app.output"
    depends_on: [pack]
  - id: by-var
    bash: |
      # uses TF_OUTPUT_LINT
      ./deploy.sh
    depends_on: [pack]
  - id: by-file
    bash: wc -c < "$TF_OUTPUT_TEST_FILE"
    depends_on: [pack]
  - id: not-upstream
    bash: echo "$TF_OUTPUT_BY_REF and $TF_OUTPUT_NOPE"
    depends_on: [pack]
`))
	g := w.Graph()
	for node, want := range map[string][]string{
		"test":         {"build-app", "lint"},
		"plain":        {"pack"},
		"by-ref":       {"build-app", "pack"},
		"by-var":       {"lint", "pack"},
		"by-file":      {"pack", "test"},
		"not-upstream": {"pack"}, // by-ref is a sibling: it may not have run yet
	} {
		var got []string
		for id := range g.Inputs(w.Node(node)) {
			got = append(got, id)
		}
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("Inputs(%s) = %v, want %v", node, got, want)
		}
	}
}
