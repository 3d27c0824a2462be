package workflow

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func writeFile(t *testing.T, dir, name, src string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func flow(name, desc string) string {
	return "name: " + name + "\ndescription: " + desc + "\nnodes:\n  - id: a\n    bash: echo\n"
}

func TestDiscoverPrecedence(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	homeDir := filepath.Join(home, "workflows")
	dirA, dirB := t.TempDir(), t.TempDir()
	writeFile(t, homeDir, "hello.yaml", flow("hello", "from home"))
	writeFile(t, homeDir, "mine.yml", flow("mine", "from home"))
	writeFile(t, dirA, "mine.yaml", flow("mine", "from a"))
	writeFile(t, dirA, "review.yaml", flow("review", "from a"))
	writeFile(t, dirB, "other.yaml", flow("review", "from b"))
	writeFile(t, dirB, "notes.txt", "not a workflow")

	c, errs := Discover(home, []string{dirA, filepath.Join(home, "missing"), dirB})
	if len(errs) != 0 {
		t.Fatalf("errors: %v", errs)
	}
	if got, want := c.Names(), []string{"hello", "mine", "plan-loop", "release", "review"}; !slices.Equal(got, want) {
		t.Errorf("Names = %v, want %v", got, want)
	}
	tests := []struct {
		name, desc string
		origin     Origin
	}{
		{"hello", "from home", Origin(homeDir)},
		{"mine", "from a", Origin(dirA)},
		{"review", "from b", Origin(dirB)},
		{"plan-loop", "", OriginBundled},
	}
	for _, tt := range tests {
		w, ok := c.Get(tt.name)
		if !ok {
			t.Errorf("%s missing", tt.name)
			continue
		}
		if tt.desc != "" && w.Description != tt.desc {
			t.Errorf("%s comes from %q, want %q", tt.name, w.Description, tt.desc)
		}
		if o := c.Origin(tt.name); o != tt.origin {
			t.Errorf("Origin(%s) = %q, want %q", tt.name, o, tt.origin)
		}
	}
	var listed []string
	for _, w := range c.List() {
		listed = append(listed, w.Name)
	}
	if !slices.Equal(listed, c.Names()) {
		t.Errorf("List = %v", listed)
	}
	if _, ok := c.Get("nope"); ok || c.Origin("nope") != "" {
		t.Error("unknown workflow found")
	}
}

func TestDiscoverKeepsValidWorkflowsAndReportsInvalidOnes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	writeFile(t, dir, "good.yaml", flow("good", "ok"))
	bad := writeFile(t, dir, "bad.yaml", "name: bad\nnodes:\n  - id: a\n    bash: echo\n    depend_on: [x]\n")
	writeFile(t, dir, "twin.yaml", flow("good", "twin"))

	c, errs := Discover("", []string{dir})
	want := []string{
		bad + ":5:5: unknown field `depend_on` in a node; did you mean `depends_on`?",
		filepath.Join(dir, "twin.yaml") + ":1:1: workflow `good` is also defined in " + filepath.Join(dir, "good.yaml") +
			"; this file is used because it sorts later; rename one of them",
	}
	if errs.Error() != strings.Join(want, "\n") {
		t.Errorf("errors:\n%v\nwant:\n%s", errs, strings.Join(want, "\n"))
	}
	if w, ok := c.Get("good"); !ok || w.Description != "twin" {
		t.Errorf("good = %v, %v", w, ok)
	}
	if _, ok := c.Get("bad"); ok {
		t.Error("an invalid workflow is in the catalog")
	}
	if _, ok := c.Get("hello"); !ok {
		t.Error("bundled workflows missing")
	}
}

func TestDiscoverReportsUnreadableDirectory(t *testing.T) {
	t.Parallel()
	notDir := writeFile(t, t.TempDir(), "file", "x")
	_, errs := Discover("", []string{notDir})
	if len(errs) != 1 || errs[0].File != notDir || !strings.Contains(errs[0].Msg, "cannot read workflow directory") {
		t.Errorf("errors = %v", errs)
	}
}
