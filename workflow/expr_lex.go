package workflow

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

type tokKind int

const (
	tokEOF tokKind = iota
	tokOperand
	tokEq
	tokNeq
	tokAnd
	tokOr
	tokNot
	tokLParen
	tokRParen
)

type token struct {
	kind tokKind
	off  int
	op   operand // for tokOperand
	text string  // as written, for messages
}

func (t token) String() string {
	if t.kind == tokEOF {
		return "end of condition"
	}
	return "`" + t.text + "`"
}

// exprVars are the variables a condition may read besides $<node>.output.
var exprVars = map[string]operandKind{
	"ARGUMENTS":      opArguments,
	"RUN_ID":         opRunID,
	"LOOP_ITERATION": opLoopIteration,
}

var operators = []struct {
	text string
	kind tokKind
}{
	{"==", tokEq}, {"!=", tokNeq}, {"&&", tokAnd}, {"||", tokOr},
	{"!", tokNot}, {"(", tokLParen}, {")", tokRParen},
}

func lex(src string) ([]token, *exprError) {
	var toks []token
	for i := 0; ; {
		for i < len(src) && strings.IndexByte(" \t\r\n", src[i]) >= 0 {
			i++
		}
		if i == len(src) {
			return append(toks, token{kind: tokEOF, off: i}), nil
		}
		t, err := lexOne(src, i)
		if err != nil {
			return nil, err
		}
		toks = append(toks, t)
		i += len(t.text)
	}
}

func lexOne(src string, i int) (token, *exprError) {
	switch c := src[i]; {
	case c == '$':
		return lexVar(src, i)
	case c == '\'' || c == '"':
		return lexString(src, i)
	}
	for _, o := range operators {
		if strings.HasPrefix(src[i:], o.text) {
			return token{kind: o.kind, off: i, text: o.text}, nil
		}
	}
	switch src[i] {
	case '=', '&', '|':
		return token{}, &exprError{i, fmt.Sprintf("unexpected `%c`; the operators are ==, !=, && and ||", src[i])}
	}
	word := src[i:]
	if j := strings.IndexAny(word, " \t\r\n()!=&|$'\""); j >= 0 {
		word = word[:max(j, 1)]
	}
	if len(word) > 40 {
		_, n := utf8.DecodeRuneInString(word)
		word = word[:n]
	}
	return token{}, &exprError{i, fmt.Sprintf("unexpected `%s`; quote literal text like '%s' and start variables with $", word, word)}
}

// lexVar reads $NAME, $<node>.output, ${NAME} or ${<node>.output}.
func lexVar(src string, i int) (token, *exprError) {
	r, ok := scanRef(src, i)
	if !ok {
		return token{}, &exprError{i, "expected $ARGUMENTS, $RUN_ID, $LOOP_ITERATION, $inputs.<name>, $<node>.output or $<node>.output.<field> after `$`"}
	}
	t := token{kind: tokOperand, off: i, text: src[i:r.end]}
	if r.node != "" {
		t.op = operand{kind: opOutput, text: r.node, field: r.field, off: i}
		return t, nil
	}
	if r.input != "" {
		t.op = operand{kind: opInput, text: r.input, off: i}
		return t, nil
	}
	kind, known := exprVars[r.name]
	if !known {
		return token{}, &exprError{i, fmt.Sprintf("`$%s` cannot be used in a condition; use $ARGUMENTS, $RUN_ID, $LOOP_ITERATION, $inputs.<name> or $<node>.output", r.name)}
	}
	t.op = operand{kind: kind, off: i}
	return t, nil
}

// lexString reads a '...' or "..." literal; a backslash escapes the next character, and \n, \t
// are a newline and a tab.
func lexString(src string, i int) (token, *exprError) {
	quote := src[i]
	var b strings.Builder
	for j := i + 1; j < len(src); j++ {
		switch c := src[j]; {
		case c == quote:
			return token{kind: tokOperand, off: i, text: src[i : j+1], op: operand{kind: opLiteral, text: b.String(), off: i}}, nil
		case c == '\\' && j+1 < len(src):
			j++
			b.WriteByte(unescape(src[j]))
		default:
			b.WriteByte(c)
		}
	}
	return token{}, &exprError{i, fmt.Sprintf("string starting here is not closed; end it with %c", quote)}
}

func unescape(c byte) byte {
	switch c {
	case 'n':
		return '\n'
	case 't':
		return '\t'
	}
	return c
}
