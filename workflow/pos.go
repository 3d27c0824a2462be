package workflow

import (
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// posIn maps a byte offset inside a scalar's value to its line and column in the file, so that an
// error inside a `when` or a script points at the exact character. Plain, quoted and literal (|)
// scalars are mapped exactly; for folded (>) and multi-line flow scalars, where YAML rewrites line
// breaks, it falls back to the start of the value.
func (d *decoder) posIn(v *yaml.Node, off int) (line, col int) {
	off = min(max(off, 0), len(v.Value))
	pre := v.Value[:off]
	switch {
	case v.Style&yaml.LiteralStyle != 0:
		return d.literalPos(v, pre)
	case v.Style&yaml.FoldedStyle != 0 || strings.Contains(pre, "\n"):
		return v.Line, v.Column
	case v.Style&(yaml.SingleQuotedStyle|yaml.DoubleQuotedStyle) != 0:
		return v.Line, d.quotedCol(v, pre)
	}
	// A plain scalar continued on the next line has its line break folded into a space, so an
	// offset past the end of the first line cannot be placed exactly.
	col = v.Column + utf8.RuneCountInString(pre)
	if col > len(d.lineRunes(v.Line))+1 {
		return v.Line, v.Column
	}
	return v.Line, col
}

// lineRunes returns line n (1-based) of the source, or nil.
func (d *decoder) lineRunes(n int) []rune {
	if n < 1 || n > len(d.lines) {
		return nil
	}
	return []rune(d.lines[n-1])
}

// literalPos places an offset of a `|` block: its content starts on the line after the indicator,
// indented by the block's indentation.
func (d *decoder) literalPos(v *yaml.Node, pre string) (line, col int) {
	if strings.TrimSpace(v.Value[len(pre):]) == "" {
		// An error at the end points just after the last character, not at the line the block's
		// final line break opens (which may be past the end of the file).
		pre = strings.TrimRight(pre, "\n")
	}
	line = v.Line + 1 + strings.Count(pre, "\n")
	if strings.TrimSpace(v.Value) == "" || line > len(d.lines) {
		// An empty block has no content line to point into: point at its `|` indicator.
		return v.Line, v.Column
	}
	lastLine := pre[strings.LastIndexByte(pre, '\n')+1:]
	return line, d.blockIndent(v.Line) + 1 + utf8.RuneCountInString(lastLine)
}

// blockIndent is the indentation of the first non-blank line after the line `after` (1-based).
func (d *decoder) blockIndent(after int) int {
	for i := after; i < len(d.lines); i++ {
		l := strings.TrimRight(d.lines[i], "\r")
		if t := strings.TrimLeft(l, " "); t != "" {
			return len(l) - len(t)
		}
	}
	return 0
}

// quotedCol walks the source of a one-line quoted scalar, where escapes (” and \x) make the
// source longer than the value.
func (d *decoder) quotedCol(v *yaml.Node, pre string) int {
	src := d.lineRunes(v.Line)
	i := v.Column // v.Column is 1-based and points at the quote, so i is the first rune inside it
	for range utf8.RuneCountInString(pre) {
		if i >= len(src) {
			return v.Column // the scalar continues on the next line: place the error at its start
		}
		i += escapeLen(src[i:], v.Style&yaml.DoubleQuotedStyle != 0)
	}
	return i + 1
}

// escapeLen is how many source runes make the next value rune of a quoted scalar.
func escapeLen(src []rune, double bool) int {
	switch {
	case !double && src[0] == '\'' && len(src) > 1 && src[1] == '\'':
		return 2
	case !double || src[0] != '\\' || len(src) < 2:
		return 1
	}
	switch src[1] {
	case 'x':
		return 4
	case 'u':
		return 6
	case 'U':
		return 10
	}
	return 2
}
