package workflow

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// decoder walks a yaml.Node tree by hand, so that every problem carries the line and column of the
// key or value at fault, and so that all problems are collected rather than only the first.
type decoder struct {
	file  string
	lines []string // the source, to place errors inside block scalars
	errs  Errors
	meta  map[*Node]*nodeMeta
	// archon: the file is Archon's, whose field reads are checked when they happen (MissingField).
	archon bool
	// wfName is the workflow's own name once decoded: a `workflow:` node may not start it.
	wfName string
}

func (d *decoder) errorAt(line, col int, format string, args ...any) {
	d.errs = append(d.errs, &Error{File: d.file, Line: max(line, 1), Col: max(col, 1), Msg: fmt.Sprintf(format, args...)})
}

func (d *decoder) errorf(n *yaml.Node, format string, args ...any) {
	d.errorAt(n.Line, n.Column, format, args...)
}

// field is one key/value pair of a mapping.
type field struct{ key, val *yaml.Node }

// mapping checks that n is a mapping of known keys and returns its fields by key. Unknown keys get
// a suggestion; repeated keys point at the first occurrence.
func (d *decoder) mapping(n *yaml.Node, what string, known []string) map[string]field {
	if n.Kind != yaml.MappingNode {
		d.errorf(n, "%s must be a mapping of %s, found %s", what, strings.Join(known, ", "), describe(n))
		return nil
	}
	out := make(map[string]field, len(n.Content)/2)
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		if k.Kind != yaml.ScalarNode {
			d.errorf(k, "%s keys must be plain names, found %s", what, describe(k))
			continue
		}
		if !contains(known, k.Value) {
			d.errorf(k, "unknown field `%s` in %s; %s", k.Value, what, suggest(k.Value, known, "fields"))
			continue
		}
		if prev, dup := out[k.Value]; dup {
			d.errorf(k, "field `%s` is set twice in %s (first at line %d); keep one", k.Value, what, prev.key.Line)
			continue
		}
		out[k.Value] = field{k, v}
	}
	return out
}

// describe names what a YAML node is, for "expected X, found Y" messages.
func describe(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.AliasNode:
		return "an alias (anchors and aliases are not supported)"
	case yaml.DocumentNode:
		return "a document"
	}
	if n.ShortTag() == "!!null" {
		return "nothing"
	}
	return fmt.Sprintf("%q", clip(n.Value))
}

func clip(s string) string {
	if utf8.RuneCountInString(s) <= 40 {
		return s
	}
	return string([]rune(s)[:40]) + "..."
}

// str reads a scalar as text. Null counts as missing.
func (d *decoder) str(f field) (string, bool) {
	if f.val.Kind != yaml.ScalarNode || f.val.ShortTag() == "!!null" {
		d.errorf(f.val, "`%s` must be text, found %s", f.key.Value, describe(f.val))
		return "", false
	}
	return f.val.Value, true
}

// nonEmpty reads text that must have content.
func (d *decoder) nonEmpty(f field) (string, bool) {
	s, ok := d.str(f)
	if ok && strings.TrimSpace(s) == "" {
		d.errorf(f.val, "`%s` is empty; write its text or remove the field", f.key.Value)
		return "", false
	}
	return s, ok
}

func (d *decoder) boolean(f field) bool {
	var b bool
	if f.val.Kind != yaml.ScalarNode || f.val.ShortTag() != "!!bool" || f.val.Decode(&b) != nil {
		d.errorf(f.val, "`%s` must be true or false, found %s", f.key.Value, describe(f.val))
	}
	return b
}

func (d *decoder) integer(f field) (int, bool) {
	var i int
	if f.val.Kind != yaml.ScalarNode || f.val.ShortTag() != "!!int" || f.val.Decode(&i) != nil {
		d.errorf(f.val, "`%s` must be a whole number, found %s", f.key.Value, describe(f.val))
		return 0, false
	}
	return i, true
}

// duration reads a Go duration such as 30s or 5m; negative durations are refused.
func (d *decoder) duration(f field) (time.Duration, bool) {
	s, ok := d.str(f)
	if !ok {
		return 0, false
	}
	dur, err := time.ParseDuration(s)
	if err != nil || dur < 0 {
		d.errorf(f.val, "`%s` is not a duration: %q; write a number with a unit, like 30s, 5m or 1h30m", f.key.Value, clip(s))
		return 0, false
	}
	return dur, true
}

// id reads a name that must match [a-z0-9][a-z0-9-_]* and be at most 64 characters.
func (d *decoder) id(f field) (string, bool) {
	s, ok := d.str(f)
	if ok && !validID(s) {
		d.errorf(f.val, "`%s` %q is not a valid name; use lower-case letters, digits, '-' and '_', starting with a letter or digit, at most %d characters", f.key.Value, clip(s), maxIDLen)
		return s, false
	}
	return s, ok
}

// oneOf reads a value that must be one of allowed.
func (d *decoder) oneOf(f field, allowed []string) (string, bool) {
	s, ok := d.str(f)
	if ok && !contains(allowed, s) {
		d.errorf(f.val, "`%s` %q is not accepted; use one of: %s", f.key.Value, clip(s), strings.Join(allowed, ", "))
		return "", false
	}
	return s, ok
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
