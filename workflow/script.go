package workflow

import (
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"
)

// KindScript runs code with a language runtime (script: + runtime:), as a process like a bash node.
const KindScript Kind = "script"

// Runtime is the program a script node's code runs with.
type Runtime string

// The runtimes. RuntimeUV runs Python through uv when uv is installed; without uv, a script that
// declares no packages runs with python3 (it needs nothing uv would add), and one that declares
// packages pauses its run saying to install uv.
const (
	RuntimeBun    Runtime = "bun"
	RuntimeNode   Runtime = "node"
	RuntimePython Runtime = "python"
	RuntimeUV     Runtime = "uv"
)

var (
	runtimes     = []string{string(RuntimeBun), string(RuntimeNode), string(RuntimePython), string(RuntimeUV)}
	scriptFields = []string{"runtime", "packages"}
)

// Script is a script node's code and how to run it.
type Script struct {
	Code    string
	Runtime Runtime
	// Packages are the Python packages a uv script needs (`packages:`, or the dependencies of a
	// PEP 723 `# /// script` block in the code). Only runtime uv takes them.
	Packages []string
}

// NeedsPackages reports whether the script declares packages, in `packages:` or in its code's
// PEP 723 block: without uv it cannot run.
func (s *Script) NeedsPackages() bool { return len(s.Packages) > 0 || pep723Dependencies(s.Code) }

// pep723Dependencies reports whether code has a `# /// script` block whose dependencies list is
// not empty (https://peps.python.org/pep-0723/).
func pep723Dependencies(code string) bool {
	in := false
	for _, line := range strings.Split(code, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case t == "# /// script":
			in = true
		case in && t == "# ///":
			in = false
		case in && strings.HasPrefix(strings.TrimSpace(strings.TrimPrefix(t, "#")), "dependencies"):
			_, list, _ := strings.Cut(t, "=")
			list = strings.Join(strings.Fields(list), "")
			if list != "[]" {
				return true
			}
		}
	}
	return false
}

// script decodes a script node: its code, `runtime` (required) and `packages` (uv only).
func (d *decoder) script(fs map[string]field, f field, node *Node) *Script {
	s := &Script{}
	s.Code, _ = d.nonEmpty(f)
	d.refuseValuesInCode(f, node)
	if g, ok := fs["runtime"]; ok {
		if r, ok := d.oneOf(g, runtimes); ok {
			s.Runtime = Runtime(r)
		}
	} else {
		d.errorf(f.key, "%s has no `runtime`; add `runtime:` with one of: %s", node.label(), strings.Join(runtimes, ", "))
	}
	if g, ok := fs["packages"]; ok {
		s.Packages = d.packages(g, s.Runtime)
	}
	return s
}

// packages decodes `packages`, a list of Python requirement strings for uv.
func (d *decoder) packages(f field, rt Runtime) []string {
	if rt != "" && rt != RuntimeUV {
		d.errorf(f.key, "`packages` applies only to `runtime: uv`; remove it, or run the script with uv")
		return nil
	}
	if f.val.Kind != yaml.SequenceNode {
		d.errorf(f.val, "`packages` must be a list like [requests, \"rich>=13\"], found %s", describe(f.val))
		return nil
	}
	var out []string
	for _, item := range f.val.Content {
		p, ok := d.nonEmpty(field{f.key, item})
		// A requirement is put on uv's command line: never let one be read as an option.
		if ok && (strings.HasPrefix(p, "-") || strings.ContainsAny(p, " \t\n")) {
			d.errorf(item, "package %q is not a requirement like requests or \"rich>=13\"; remove the spaces or leading '-'", p)
			continue
		}
		if ok {
			out = append(out, p)
		}
	}
	return out
}

// refuseValuesInCode refuses $ARGUMENTS, $node.output and the other variables in a script's code:
// substituted into it, a value would become code (an argument `"; import os; os.system(...)` runs).
// Scripts read every value from their environment, where ShellEnv puts it.
func (d *decoder) refuseValuesInCode(f field, node *Node) {
	eachRef(f.val.Value, func(start int, r ref) {
		var env string
		switch {
		case r.field != "":
			env = FieldEnvName(r.node, r.field)
		case r.node != "":
			env = OutputEnvName(r.node)
		default:
			if _, ours := (Vars{}).lookup(r.name); !ours {
				return
			}
			env = r.name
		}
		line, col := d.posIn(f.val, start)
		written := f.val.Value[start:r.end]
		d.errorAt(line, col, "`script` of %s writes %s, whose value would become code; read it from the environment instead: %s",
			node.label(), written, readEnvHint(env))
	})
}

// readEnvHint says how each runtime reads an environment variable.
func readEnvHint(env string) string {
	return fmt.Sprintf("process.env.%s (bun, node) or os.environ[%q] (python, uv)", env, env)
}

// scriptAndFormat decodes output_format, and refuses the script settings on other kinds.
func (d *decoder) scriptAndFormat(fs map[string]field, node *Node) {
	for _, key := range scriptFields {
		if f, ok := fs[key]; ok && node.Kind != "" && node.Kind != KindScript {
			d.errorf(f.key, "`%s` applies only to script nodes; remove it from this %s node", key, node.Kind)
		}
	}
	if f, ok := fs["output_format"]; ok {
		node.OutputFormat = d.outputFormat(f, node)
	}
}
