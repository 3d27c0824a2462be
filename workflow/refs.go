package workflow

import "strings"

// ref is one variable reference found in text: either an upper-case variable ($NAME, ${NAME}),
// a node output ($node.output, ${node.output}), one field of a node's JSON output
// ($node.output.field, ${node.output.field}) or a typed input ($inputs.name, ${inputs.name}).
type ref struct {
	name  string // variable name without $, when not an output or input
	node  string // node id, for $node.output
	field string // for $node.output.field
	input string // input name, for $inputs.name
	end   int    // byte offset just past the reference
}

const (
	outputSuffix = ".output"
	inputsPrefix = "inputs."
)

// scanInput reads $inputs.name at src[i], the name ending at the first byte that cannot be in one.
func scanInput(src string, i int) (ref, bool) {
	start := i + 1 + len(inputsPrefix)
	if !strings.HasPrefix(src[i+1:], inputsPrefix) || start >= len(src) || !isIDStart(src[start]) {
		return ref{}, false
	}
	j := start
	for j < len(src) && isIDChar(src[j]) {
		j++
	}
	return ref{input: src[start:j], end: j}, true
}

// scanRef reads the reference that starts with the '$' at src[i].
func scanRef(src string, i int) (ref, bool) {
	if i+1 >= len(src) {
		return ref{}, false
	}
	if src[i+1] == '{' {
		j := strings.IndexByte(src[i+2:], '}')
		if j < 0 {
			return ref{}, false
		}
		r, ok := refBody(src[i+2 : i+2+j])
		r.end = i + 3 + j
		return r, ok
	}
	if r, ok := scanInput(src, i); ok {
		return r, true
	}
	j := i + 1
	if isUpperStart(src[j]) {
		for j < len(src) && isUpperChar(src[j]) {
			j++
		}
		return ref{name: src[i+1 : j], end: j}, true
	}
	for j < len(src) && isIDChar(src[j]) {
		j++
	}
	if j == i+1 || !isIDStart(src[i+1]) || !strings.HasPrefix(src[j:], outputSuffix) {
		return ref{}, false
	}
	end := j + len(outputSuffix)
	// $build.outputs is not $build.output followed by "s": refuse rather than guess.
	if end < len(src) && (isUpperChar(src[end]) || src[end] >= 'a' && src[end] <= 'z') {
		return ref{}, false
	}
	r := ref{node: src[i+1 : j], end: end}
	// $build.output.verdict reads a field; "$build.output." ending a sentence does not.
	if end+1 < len(src) && src[end] == '.' && isFieldStart(src[end+1]) {
		k := end + 1
		for k < len(src) && isFieldChar(src[k]) {
			k++
		}
		r.field, r.end = src[end+1:k], k
	}
	return r, true
}

// refBody reads the inside of ${...}.
func refBody(s string) (ref, bool) {
	if name, ok := strings.CutPrefix(s, inputsPrefix); ok && validID(name) {
		return ref{input: name}, true
	}
	if id, ok := strings.CutSuffix(s, outputSuffix); ok && validID(id) {
		return ref{node: id}, true
	}
	if id, field, ok := strings.Cut(s, outputSuffix+"."); ok && validID(id) && validField(field) {
		return ref{node: id, field: field}, true
	}
	if s == "" || !isUpperStart(s[0]) {
		return ref{}, false
	}
	for i := range len(s) {
		if !isUpperChar(s[i]) {
			return ref{}, false
		}
	}
	return ref{name: s}, true
}

// eachRef calls f for every reference in text with its start offset.
func eachRef(text string, f func(start int, r ref)) {
	for i := 0; i < len(text); i++ {
		if text[i] != '$' {
			continue
		}
		if r, ok := scanRef(text, i); ok {
			f(i, r)
			i = r.end - 1
		}
	}
}

func isUpperStart(c byte) bool { return c >= 'A' && c <= 'Z' || c == '_' }
func isUpperChar(c byte) bool  { return isUpperStart(c) || c >= '0' && c <= '9' }
func isIDStart(c byte) bool    { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }
func isIDChar(c byte) bool     { return isIDStart(c) || c == '-' || c == '_' }
func isFieldStart(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_' }
func isFieldChar(c byte) bool  { return isFieldStart(c) || c >= '0' && c <= '9' }

// validField reports whether s can be read as $node.output.s: a letter or '_', then letters,
// digits and '_', at most maxIDLen.
func validField(s string) bool {
	if s == "" || len(s) > maxIDLen || !isFieldStart(s[0]) {
		return false
	}
	for i := range len(s) {
		if !isFieldChar(s[i]) {
			return false
		}
	}
	return true
}

// maxIDLen bounds workflow, node and input names.
const maxIDLen = 64

// validID reports whether s is a valid workflow, node or input name: [a-z0-9][a-z0-9-_]*, at most 64.
func validID(s string) bool {
	if s == "" || len(s) > maxIDLen || !isIDStart(s[0]) {
		return false
	}
	for i := range len(s) {
		if !isIDChar(s[i]) {
			return false
		}
	}
	return true
}
