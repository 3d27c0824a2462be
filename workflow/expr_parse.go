package workflow

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Limits that keep hostile conditions cheap: the parser recurses on '(' and '!'.
const (
	maxExprLen   = 4096
	maxExprDepth = 64
)

// exprError is a parse failure at a byte offset of the condition.
type exprError struct {
	off int
	msg string
}

// ParseExpr parses a `when` condition. Errors are *Error with Line and Col inside src.
func ParseExpr(src string) (*Expr, error) {
	e, perr := parseExpr(src)
	if perr != nil {
		line, col := offsetPos(src, perr.off)
		return nil, &Error{Line: line, Col: col, Msg: perr.msg}
	}
	return e, nil
}

// offsetPos turns a byte offset into a 1-based line and rune column.
func offsetPos(src string, off int) (line, col int) {
	off = min(max(off, 0), len(src))
	pre := src[:off]
	line = 1 + strings.Count(pre, "\n")
	return line, 1 + utf8.RuneCountInString(pre[strings.LastIndexByte(pre, '\n')+1:])
}

func parseExpr(src string) (*Expr, *exprError) {
	if len(src) > maxExprLen {
		return nil, &exprError{0, fmt.Sprintf("condition is %d bytes; keep it under %d", len(src), maxExprLen)}
	}
	toks, err := lex(src)
	if err != nil {
		return nil, err
	}
	p := &exprParser{toks: toks}
	if p.peek().kind == tokEOF {
		return nil, &exprError{0, "condition is empty; write one like `$build.output == 'ok'` or remove `when`"}
	}
	root, err := p.or(0)
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tokEOF {
		return nil, &exprError{t.off, fmt.Sprintf("unexpected %s; join conditions with && or ||", t)}
	}
	return &Expr{src: src, root: root}, nil
}

type exprParser struct {
	toks []token
	pos  int
}

func (p *exprParser) peek() token { return p.toks[p.pos] }

func (p *exprParser) next() token {
	t := p.toks[p.pos]
	if t.kind != tokEOF {
		p.pos++
	}
	return t
}

// or := and ('||' and)*
func (p *exprParser) or(depth int) (boolNode, *exprError) {
	return p.chain(depth, tokOr, p.and, func(l, r boolNode) boolNode { return orNode{l, r} })
}

// and := cmp ('&&' cmp)*
func (p *exprParser) and(depth int) (boolNode, *exprError) {
	return p.chain(depth, tokAnd, p.cmp, func(l, r boolNode) boolNode { return andNode{l, r} })
}

// chain := operand (op operand)*, joined from the left: a || b || c is (a || b) || c.
func (p *exprParser) chain(depth int, op tokKind, operand func(int) (boolNode, *exprError), join func(l, r boolNode) boolNode) (boolNode, *exprError) {
	l, err := operand(depth)
	for err == nil && p.peek().kind == op {
		p.next()
		var r boolNode
		if r, err = operand(depth); err == nil {
			l = join(l, r)
		}
	}
	return l, err
}

// cmp := operand (('=='|'!=') operand)? | '(' or ')' | '!' cmp
func (p *exprParser) cmp(depth int) (boolNode, *exprError) {
	t := p.peek()
	if depth > maxExprDepth {
		return nil, &exprError{t.off, fmt.Sprintf("condition nests deeper than %d levels; simplify it", maxExprDepth)}
	}
	switch t.kind {
	case tokNot:
		p.next()
		x, err := p.cmp(depth + 1)
		return notNode{x}, err
	case tokLParen:
		return p.group(depth)
	case tokOperand:
		p.next()
		return p.comparison(t.op)
	default:
		return nil, &exprError{t.off, fmt.Sprintf("expected a variable, a quoted string, '(' or '!', found %s", t)}
	}
}

func (p *exprParser) group(depth int) (boolNode, *exprError) {
	open := p.next()
	x, err := p.or(depth + 1)
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tokRParen {
		return nil, &exprError{t.off, fmt.Sprintf("expected ')' to close the '(' at column %d, found %s", open.off+1, t)}
	}
	p.next()
	return x, nil
}

func (p *exprParser) comparison(l operand) (boolNode, *exprError) {
	op := p.peek()
	if op.kind != tokEq && op.kind != tokNeq {
		return truthNode{l}, nil
	}
	p.next()
	r := p.next()
	if r.kind != tokOperand {
		return nil, &exprError{r.off, fmt.Sprintf("expected a variable or a quoted string after %s, found %s", op, r)}
	}
	return cmpNode{l: l, r: r.op, neq: op.kind == tokNeq}, nil
}
