package workflow

import (
	"maps"
	"slices"
	"strings"
)

// Vars are the values a running node sees. Zero LoopIteration or Attempt means "not applicable"
// and renders as an empty string.
type Vars struct {
	Arguments, RunID, ArtifactsDir string
	Inputs                         map[string]string            // typed inputs by name (Workflow.RunInputs); nil without
	Outputs                        map[string]string            // node id -> output as kept inline (bounded)
	OutputFiles                    map[string]string            // node id -> path of the node's full output
	Fields                         map[string]map[string]string // node id -> FieldsOf its output
	LoopUserInput                  string
	LoopIteration, Attempt         int
	// PayloadFile is $TRIGGER_PAYLOAD_FILE: the file holding the body of the delivery that started
	// the run ("" when no delivery did). The payload itself never reaches a script's text.
	PayloadFile string
}

// lookup returns the value of an upper-case variable, and whether it is one of ours.
func (v Vars) lookup(name string) (string, bool) {
	switch name {
	case "ARGUMENTS":
		return v.Arguments, true
	case "RUN_ID":
		return v.RunID, true
	case "ARTIFACTS_DIR":
		return v.ArtifactsDir, true
	case "LOOP_USER_INPUT":
		return v.LoopUserInput, true
	case "LOOP_ITERATION":
		return countString(v.LoopIteration), true
	case "ATTEMPT":
		return countString(v.Attempt), true
	}
	return "", false
}

// Expand substitutes variables into prompt and message text. It must never be used on shell
// scripts: a value would become code (see ShellScript). Outputs are inserted trimmed of
// surrounding whitespace; an output of a node that did not run is empty; unknown $NAMES stay as written.
func Expand(text string, v Vars) string {
	var b strings.Builder
	last := 0
	eachRef(text, func(start int, r ref) {
		val, ok := v.lookup(r.name)
		switch {
		case r.field != "":
			val, ok = v.field(r.node, r.field), true
		case r.node != "":
			val, ok = strings.TrimSpace(v.Outputs[r.node]), true
		case r.input != "":
			val, ok = v.Inputs[r.input], true
		}
		if !ok {
			return
		}
		b.WriteString(text[last:start])
		b.WriteString(val)
		last = r.end
	})
	b.WriteString(text[last:])
	return b.String()
}

// ShellScript rewrites $node.output and ${node.output} into ${TF_OUTPUT_<NODE>}, and
// $node.output.field into ${TF_FIELD_<NODE>_<FIELD>}, and $inputs.name into ${INPUT_<NAME>}, so
// that the shell reads each value from the
// environment built by ShellEnv. No value ever enters the script text,
// so an output such as `$(rm -rf /)` is data, never code. $ARGUMENTS and the other variables are
// already environment variables and stay as written. Like any shell variable, a reference inside
// single quotes is not expanded; a reference after a backslash or `$$` is left alone.
func ShellScript(script string) string {
	var b strings.Builder
	last := 0
	eachRef(script, func(start int, r ref) {
		if r.node == "" && r.input == "" || escapedDollar(script, start) {
			return
		}
		b.WriteString(script[last:start])
		switch {
		case r.input != "":
			b.WriteString("${" + InputEnvName(r.input) + "}")
		case r.field != "":
			b.WriteString("${" + FieldEnvName(r.node, r.field) + "}")
		default:
			b.WriteString("${" + OutputEnvName(r.node) + "}")
		}
		last = r.end
	})
	b.WriteString(script[last:])
	return b.String()
}

// escapedDollar reports whether the '$' at i is quoted by a backslash or is the second half of $$.
func escapedDollar(s string, i int) bool {
	return i > 0 && (s[i-1] == '\\' || s[i-1] == '$')
}

// ShellEnv returns the environment entries ("NAME=value") that carry v into a bash or script node.
// Outputs are passed as given (the orchestrator bounds them), sorted by node id, each with
// TF_OUTPUT_<NODE>_FILE naming the file that holds the full output, then the fields of outputs that
// are JSON objects as TF_FIELD_<NODE>_<FIELD>. NUL bytes are dropped because
// an environment entry cannot hold them and the process would fail to start.
func ShellEnv(v Vars) []string {
	env := make([]string, 0, 6+2*len(v.Outputs))
	for _, name := range []string{"ARGUMENTS", "RUN_ID", "ARTIFACTS_DIR", "LOOP_USER_INPUT", "LOOP_ITERATION", "ATTEMPT"} {
		val, _ := v.lookup(name)
		env = append(env, name+"="+stripNUL(val))
	}
	if v.PayloadFile != "" {
		env = append(env, PayloadFileEnv+"="+stripNUL(v.PayloadFile))
	}
	for _, name := range slices.Sorted(maps.Keys(v.Inputs)) {
		env = append(env, InputEnvName(name)+"="+stripNUL(v.Inputs[name]))
	}
	for _, id := range slices.Sorted(maps.Keys(v.Outputs)) {
		env = append(env, OutputEnvName(id)+"="+stripNUL(v.Outputs[id]))
		if f, ok := v.OutputFiles[id]; ok {
			env = append(env, OutputFileEnvName(id)+"="+stripNUL(f))
		}
	}
	return append(env, fieldEnv(v)...)
}

// PayloadFileEnv names the file holding the payload of the delivery that started a run.
const PayloadFileEnv = "TRIGGER_PAYLOAD_FILE"

func stripNUL(s string) string { return strings.ReplaceAll(s, "\x00", "") }

// OutputEnvName is the environment variable that carries a node's output into shell scripts:
// TF_OUTPUT_ followed by the id upper-cased, with every byte outside [A-Za-z0-9] as '_'.
// Validation rejects two ids that share a name (build-a and build_a).
func OutputEnvName(nodeID string) string { return "TF_OUTPUT_" + envPart(nodeID) }

// envPart is s upper-cased with every byte outside [A-Za-z0-9] as '_'.
func envPart(s string) string {
	b := []byte(s)
	for i, c := range b {
		switch {
		case c >= 'a' && c <= 'z':
			b[i] = c - 'a' + 'A'
		case c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		default:
			b[i] = '_'
		}
	}
	return string(b)
}

// OutputFileEnvName is the environment variable that carries the path of a node's full output
// file into shell scripts: OutputEnvName followed by _FILE.
func OutputFileEnvName(nodeID string) string { return OutputEnvName(nodeID) + "_FILE" }
