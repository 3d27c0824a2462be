package workflow

import (
	"strconv"
	"strings"
)

// Expr is a parsed `when` condition. A nil *Expr is "no condition" and evaluates to true.
//
// The language is deliberately tiny (comparisons of variables and string literals joined by
// && || !), so it has a hand-written parser: a general expression library would know neither our
// variables nor how to report a column that Parse can map back into the YAML file.
type Expr struct {
	src  string
	root boolNode
}

// Eval reports whether the condition holds for v. A nil Expr holds.
func (e *Expr) Eval(v Vars) bool {
	if e == nil {
		return true
	}
	return e.root.eval(v)
}

// String returns the condition as written.
func (e *Expr) String() string {
	if e == nil {
		return ""
	}
	return strings.TrimSpace(e.src)
}

// refs returns every operand of kind the condition reads ($<node>.output and $<node>.output.field,
// or $inputs.name), in source order.
func (e *Expr) refs(kind operandKind) []operand {
	var out []operand
	e.root.walk(func(o operand) {
		if o.kind == kind {
			out = append(out, o)
		}
	})
	return out
}

// boolNode is a node of the condition tree.
type boolNode interface {
	eval(v Vars) bool
	walk(func(operand))
}

type orNode struct{ l, r boolNode }
type andNode struct{ l, r boolNode }
type notNode struct{ x boolNode }
type cmpNode struct {
	l, r operand
	neq  bool
}
type truthNode struct{ x operand }

func (n orNode) eval(v Vars) bool    { return n.l.eval(v) || n.r.eval(v) }
func (n andNode) eval(v Vars) bool   { return n.l.eval(v) && n.r.eval(v) }
func (n notNode) eval(v Vars) bool   { return !n.x.eval(v) }
func (n cmpNode) eval(v Vars) bool   { return (n.l.value(v) == n.r.value(v)) != n.neq }
func (n truthNode) eval(v Vars) bool { return n.x.value(v) != "" }

func (n orNode) walk(f func(operand))    { n.l.walk(f); n.r.walk(f) }
func (n andNode) walk(f func(operand))   { n.l.walk(f); n.r.walk(f) }
func (n notNode) walk(f func(operand))   { n.x.walk(f) }
func (n cmpNode) walk(f func(operand))   { f(n.l); f(n.r) }
func (n truthNode) walk(f func(operand)) { f(n.x) }

type operandKind int

const (
	opLiteral operandKind = iota
	opArguments
	opRunID
	opLoopIteration
	opOutput
	opInput
)

// operand is a string-valued leaf: a literal or a variable. off is its byte offset in the source.
type operand struct {
	kind  operandKind
	text  string // the literal's value, or the node id of an output
	field string // for $node.output.field
	off   int
}

// value resolves the operand. Outputs are trimmed because shell output ends with a newline and
// `$build.output == 'ok'` must hold when build printed "ok\n".
func (o operand) value(v Vars) string {
	switch o.kind {
	case opArguments:
		return v.Arguments
	case opRunID:
		return v.RunID
	case opLoopIteration:
		return countString(v.LoopIteration)
	case opOutput:
		if o.field != "" {
			return v.field(o.text, o.field)
		}
		return strings.TrimSpace(v.Outputs[o.text])
	case opInput:
		return v.Inputs[o.text]
	default:
		return o.text
	}
}

// countString renders a 1-based counter; zero means "not applicable here" and renders empty.
func countString(n int) string {
	if n <= 0 {
		return ""
	}
	return strconv.Itoa(n)
}
