package workflow

import (
	"bytes"
	"encoding/json"
	"sort"
	"strings"
)

// maxFields bounds how many fields of one output reach a shell or script node's environment: a
// JSON object with thousands of keys must not start a process with thousands of variables.
const maxFields = 100

// FieldsOf reads the top-level fields of a node's output when it is a JSON object (a structured
// answer, or a bash or script node that printed one), as the text each renders to: a string as
// itself, null as empty, anything else as compact JSON (numbers as written, true/false, arrays and
// objects). Output that is not a JSON object has no fields (nil). Keys that cannot be written as
// $node.output.<key> are left out, and at most maxFields are kept (in key order).
func FieldsOf(output string) map[string]string {
	t := strings.TrimSpace(output)
	if !strings.HasPrefix(t, "{") {
		return nil
	}
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(t), &obj) != nil {
		return nil
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		if validField(k) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	fields := make(map[string]string, min(len(keys), maxFields))
	for _, k := range keys[:min(len(keys), maxFields)] {
		fields[k] = fieldText(obj[k])
	}
	return fields
}

// fieldText renders one JSON value as the text $node.output.field stands for.
func fieldText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if string(raw) == "null" {
		return ""
	}
	var b bytes.Buffer
	if json.Compact(&b, raw) != nil {
		return string(raw)
	}
	return b.String()
}

// field is the value of $node.output.field in v: empty when the node did not run, its output is
// not a JSON object, or the object lacks the field (a field the schema does not declare is refused
// when the workflow is loaded, see checkRef).
func (v Vars) field(node, field string) string { return v.Fields[node][field] }

// FieldEnvName is the environment variable that carries one field of a node's output into shell and
// script nodes: TF_FIELD_<NODE>_<FIELD>, each part upper-cased with every byte outside [A-Za-z0-9]
// as '_' (the node part as in OutputEnvName).
func FieldEnvName(nodeID, field string) string {
	return "TF_FIELD_" + envPart(nodeID) + "_" + envPart(field)
}

// fieldEnv returns the TF_FIELD_ entries of v, sorted by node and field.
func fieldEnv(v Vars) []string {
	ids := make([]string, 0, len(v.Fields))
	for id := range v.Fields {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var env []string
	for _, id := range ids {
		names := make([]string, 0, len(v.Fields[id]))
		for f := range v.Fields[id] {
			names = append(names, f)
		}
		sort.Strings(names)
		for _, f := range names {
			env = append(env, FieldEnvName(id, f)+"="+stripNUL(v.Fields[id][f]))
		}
	}
	return env
}
