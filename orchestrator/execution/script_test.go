package execution

import (
	"errors"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"threadflow/db"
	"threadflow/workflow"
)

// The uv rule: uv when installed (with the declared packages), else python3 for a script that
// declares none, else a pause naming uv. Any other missing program pauses naming it.
func TestScriptCommandChoosesTheProgram(t *testing.T) {
	t.Parallel()
	installed := func(names ...string) func(string) (string, error) {
		return func(name string) (string, error) {
			if slices.Contains(names, name) {
				return "/usr/bin/" + name, nil
			}
			return "", &exec.Error{Name: name, Err: exec.ErrNotFound}
		}
	}
	uvWith := &workflow.Script{Runtime: workflow.RuntimeUV, Packages: []string{"rich>=13"}}
	uvPEP723 := &workflow.Script{Runtime: workflow.RuntimeUV, Code: "# /// script\n# dependencies = [\"rich\"]\n# ///\n"}
	uvBare := &workflow.Script{Runtime: workflow.RuntimeUV, Code: "print(1)"}
	for _, c := range []struct {
		name   string
		script *workflow.Script
		look   func(string) (string, error)
		argv   string // or the start of the error
	}{
		{"bun", &workflow.Script{Runtime: workflow.RuntimeBun}, installed("bun"), "/usr/bin/bun f"},
		{"node", &workflow.Script{Runtime: workflow.RuntimeNode}, installed("node"), "/usr/bin/node f"},
		{"python", &workflow.Script{Runtime: workflow.RuntimePython}, installed("python3"), "/usr/bin/python3 f"},
		{"uv installed", uvWith, installed("uv", "python3"), "/usr/bin/uv run --quiet --no-project --with rich>=13 f"},
		{"uv missing, no packages", uvBare, installed("python3"), "/usr/bin/python3 f"},
		{"uv missing, packages", uvWith, installed("python3"), "error: node s declares Python packages, which need `uv`"},
		{"uv missing, PEP 723 packages", uvPEP723, installed("python3"), "error: node s declares Python packages, which need `uv`"},
		{"bun missing", &workflow.Script{Runtime: workflow.RuntimeBun}, installed("node"), "error: node s needs `bun` (runtime: bun), which is not installed"},
		{"python3 missing for uv", uvBare, installed(), "error: node s needs `python3` (runtime: uv)"},
	} {
		argv, err := scriptCommand(&workflow.Node{ID: "s", Kind: workflow.KindScript, Script: c.script}, "f", c.look)
		got := strings.Join(argv, " ")
		if err != nil {
			var ne *nodeError
			if !errors.As(err, &ne) || ne.class != db.ClassInfra || ne.hint == "" {
				t.Errorf("%s: %v is not an infrastructure failure with a hint", c.name, err)
			}
			got = "error: " + err.Error()
		}
		if !strings.HasPrefix(got, c.argv) {
			t.Errorf("%s: got %q, want %q", c.name, got, c.argv)
		}
	}
}
