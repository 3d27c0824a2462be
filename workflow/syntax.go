package workflow

import (
	"bytes"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// YAML syntax errors, at the line and column where the text stops being YAML.
//
// yaml.v3 reports a syntax error as "yaml: line N: problem" with no column, and N is where the
// enclosing construct began, not where the text broke: for a parser error it is even that line
// counted from 0, so a list whose fifth line is mis-indented is reported at the line above the
// list. The exact position exists inside yaml.v3 but is not exported, so it is recovered here:
//
//  1. The line. yaml.v3 reads from the start and stops at the first thing it cannot read, so the
//     first k lines of the file fail with the very same error exactly when k reaches the broken
//     line; a binary search over k finds it with a few re-parses.
//  2. The column and the explanation. That line is read against the blocks the lines above it left
//     open (the mappings and lists whose indentation a new line must match: yaml.v3 parses those
//     lines fine) and against its own tabs, quotes, brackets and colons.
//
// What cannot be explained falls back to yaml.v3's own words, still at the broken line. The search
// re-parses up to about 20 prefixes, so it is done only for files up to maxLocateSize: real
// workflows are a few kilobytes, and a broken file is read again at every catalog reload.

// maxLocateSize bounds the files whose syntax errors are located exactly (about 0.2 s of parsing
// at this size); a larger file gets yaml.v3's line.
const maxLocateSize = 128 << 10

// tabMsg is the one explanation of every tab yaml.v3 refuses.
const tabMsg = "a tab character: YAML indents with spaces only; replace it with spaces"

// yaml.v3's problems, as it words them.
const (
	probNoMapping    = "mapping values are not allowed in this context"
	probNoKey        = "did not find expected key"
	probNoDash       = "did not find expected '-' indicator"
	probNoColon      = "could not find expected ':'"
	probNoSequence   = "block sequence entries are not allowed in this context"
	probEndOfStream  = "found unexpected end of stream"
	probNoToken      = "found character that cannot start any token"
	probNodeContent  = "did not find expected node content"
	probFlowSequence = "did not find expected ',' or ']'"
	probFlowMapping  = "did not find expected ',' or '}'"
)

var yamlLine = regexp.MustCompile(`^yaml: line (\d+): `)

// yamlError records a yaml.v3 syntax error of src as one Error at the broken line and column.
func (d *decoder) yamlError(src []byte, err error) {
	text := err.Error()
	problem, reported := strings.TrimPrefix(text, "yaml: "), 0
	if m := yamlLine.FindStringSubmatch(text); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil {
			reported = n
		}
		problem = text[len(m[0]):]
	}
	if len(src) > maxLocateSize {
		d.errorAt(max(reported, 1), 1, "YAML syntax error: %s; check indentation and quoting from this line on", problem)
		return
	}
	ends := lineEnds(src)
	n := brokenLine(src, ends, text, reported)
	lines := make([]string, n)
	for i := range lines {
		lines[i] = strings.TrimRight(string(src[lineStart(ends, i+1):ends[i]]), "\r\n")
	}
	// What the lines above left open costs one more parse: only indentation problems need it.
	open := func() []level {
		if n == 1 {
			return nil
		}
		root, err := firstDocument(src[:ends[n-2]])
		if err != nil {
			return nil
		}
		return openLevels(root)
	}
	line, col, msg := explain(problem, lines, reported, open)
	d.errorAt(line, col, "%s", msg)
}

// lineEnds returns, for each line of src, the offset just past its end (its '\n', or the end of src).
func lineEnds(src []byte) []int {
	var ends []int
	for i, c := range src {
		if c == '\n' {
			ends = append(ends, i+1)
		}
	}
	if len(ends) == 0 || ends[len(ends)-1] < len(src) {
		ends = append(ends, len(src))
	}
	return ends
}

func lineStart(ends []int, n int) int {
	if n <= 1 {
		return 0
	}
	return ends[n-2]
}

// brokenLine is the first line k such that the first k lines of src fail with the error text want,
// which the whole of src fails with. The search starts at from, the line yaml.v3 named: the
// construct it names there begins at that line or the next, and the text breaks inside it.
func brokenLine(src []byte, ends []int, want string, from int) int {
	fails := func(k int) bool {
		_, err := firstDocument(src[:ends[k-1]])
		return err != nil && err.Error() == want
	}
	lo, hi := min(max(from, 1), len(ends)), len(ends)
	for lo < hi {
		mid := (lo + hi) / 2
		if fails(mid) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	return lo
}

// firstDocument decodes the first YAML document of src, as Parse does.
func firstDocument(src []byte) (root *yaml.Node, err error) {
	defer func() {
		// yaml.v3 has panicked on malformed input before; a hostile file must not take down the bot.
		if r := recover(); r != nil {
			root, err = nil, fmt.Errorf("cannot read this file as YAML: %v", r)
		}
	}()
	var doc yaml.Node
	if err := yaml.NewDecoder(bytes.NewReader(src)).Decode(&doc); err != nil {
		return nil, err
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	return doc.Content[0], nil
}

// level is a block mapping or list still open at the end of a line. A later line belongs to it
// only when indented exactly as its keys (a mapping) or its `-` (a list).
type level struct {
	col      int    // indentation of its keys or of its `-`, in spaces
	line     int    // line of its last key or item
	key      string // its last key; "" for a list
	hasValue bool   // the last key has a value (not only lines under it still to come)
}

func (l level) String() string {
	if l.key == "" {
		return fmt.Sprintf("the `-` on line %d", l.line)
	}
	return fmt.Sprintf("`%s` on line %d", l.key, l.line)
}

// openLevels follows the last entry of each block collection down from root: the blocks a line
// after the document could continue.
func openLevels(root *yaml.Node) []level {
	var out []level
	for n := root; n != nil && n.Style&yaml.FlowStyle == 0 && len(n.Content) > 0; {
		last := n.Content[len(n.Content)-1]
		switch n.Kind {
		case yaml.MappingNode:
			key := n.Content[len(n.Content)-2]
			empty := last.Kind == yaml.ScalarNode && last.ShortTag() == "!!null" && last.Value == "" && last.Style == 0
			out = append(out, level{col: n.Column - 1, line: key.Line, key: key.Value, hasValue: !empty})
		case yaml.SequenceNode:
			out = append(out, level{col: n.Column - 1, line: last.Line, hasValue: true})
		default:
			return out
		}
		n = last
	}
	return out
}

// explain returns the position (line, 1-based column) and the message of a syntax error yaml.v3
// found on the last of lines. reported is the line yaml.v3 named (0 if none); open returns what the
// lines above left open.
func explain(problem string, lines []string, reported int, open func() []level) (int, int, string) {
	n := len(lines)
	line := lines[n-1]
	f := scanLine(line)
	col := func(i int) int { return utf8.RuneCountInString(line[:i]) + 1 }
	if f.tab >= 0 {
		return n, col(f.tab), tabMsg
	}
	switch problem {
	case probEndOfStream:
		if f.openQuote >= 0 {
			q := line[f.openQuote]
			return n, col(f.openQuote), fmt.Sprintf("the quoted text that starts here has no closing `%c`; end it with `%c`", q, q)
		}
	case probFlowSequence, probFlowMapping, probNodeContent:
		if at, i, ok := openBracket(lines, reported); ok {
			closing, what := "]", "list"
			if lines[at-1][i] == '{' {
				closing, what = "}", "mapping"
			}
			return at, utf8.RuneCountInString(lines[at-1][:i]) + 1,
				fmt.Sprintf("this `%c` is never closed; end the %s with `%s`", lines[at-1][i], what, closing)
		}
	case probNoToken:
		if f.reserved >= 0 {
			what := "`@`"
			if line[f.reserved] == '`' {
				what = "a backtick"
			}
			return n, col(f.reserved), fmt.Sprintf("a value cannot start with %s in YAML; put the value in quotes", what)
		}
	case probNoMapping, probNoKey, probNoDash, probNoColon:
		if msg, ok := indentation(f, open()); ok {
			return n, col(f.indent), msg
		}
		if i, msg, ok := structure(problem, line, f); ok {
			return n, col(i), msg
		}
	case probNoSequence:
		if len(f.colons) > 0 {
			if i := strings.IndexByte(line[f.colons[0]:], '-'); i >= 0 {
				return n, col(f.colons[0] + i), "a list cannot start on the line of its key; put each `- ` item on a line of its own, indented under the key"
			}
		}
	}
	return n, col(f.content), fmt.Sprintf("YAML syntax error: %s; check the indentation and quoting of this line", problem)
}

// indentation explains a line indented as none of the blocks open above it.
func indentation(f lineFacts, open []level) (string, bool) {
	if len(open) == 0 {
		return "", false
	}
	var list *level
	for i, l := range open {
		switch {
		case l.col == f.indent && l.key != "":
			return "", false // lined up with a mapping's keys: not an indentation problem
		case l.col == f.indent:
			list = &open[i]
		}
	}
	if list != nil {
		if f.dash {
			return "", false
		}
		msg := fmt.Sprintf("this line is indented %s, like %s, but does not start with `- `; start it with `- ` for a new list item", spaces(f.indent), list)
		if item := deeper(open, f.indent); item != nil && item.key != "" {
			msg += fmt.Sprintf(", or indent it %s like %s to add it to that item", spaces(item.col), item)
		}
		return msg, true
	}
	inner := open[len(open)-1]
	if f.indent > inner.col {
		if !inner.hasValue {
			return "", false // the first line of the key's value
		}
		return fmt.Sprintf("this line is indented %s, more than %s (%s); line it up with the key it belongs to",
			spaces(f.indent), inner, spaces(inner.col)), true
	}
	above, below := deeper(open, f.indent), shallower(open, f.indent)
	if above == nil || below == nil {
		return "", false
	}
	return fmt.Sprintf("this line is indented %s, less than %s (%s) and more than %s (%s); line it up with the key it belongs to",
		spaces(f.indent), above, spaces(above.col), below, spaces(below.col)), true
}

// deeper is the innermost open level indented more than col, shallower the innermost indented less.
func deeper(open []level, col int) *level {
	for i := range open {
		if open[i].col > col {
			return &open[i]
		}
	}
	return nil
}

func shallower(open []level, col int) *level {
	for i := len(open) - 1; i >= 0; i-- {
		if open[i].col < col {
			return &open[i]
		}
	}
	return nil
}

func spaces(n int) string {
	if n == 1 {
		return "1 space"
	}
	return fmt.Sprintf("%d spaces", n)
}

// structure explains a line that is indented right but is not `key: value` or `- item`: a second
// `: `, a `:` without a key, text after a closing quote, a key without `:`, a list item among keys.
func structure(problem, line string, f lineFacts) (int, string, bool) {
	switch {
	case len(f.colons) > 0 && f.colons[0] == f.content:
		return f.content, "a `:` with no key before it; write the field's name before the `:`", true
	case problem == probNoMapping && len(f.colons) > 1:
		return f.colons[1], "a second `: ` on this line; a value that contains `: ` must be quoted, as in " + quotedExample(line, f), true
	case f.afterQuote >= 0:
		return f.afterQuote, "text after the closing quote; put the whole value inside the quotes", true
	case problem == probNoKey && f.dash:
		return f.indent, "a list item among the fields of a mapping; a list goes on the lines after its key (`key:`), indented more than the key", true
	case problem == probNoColon && len(f.colons) == 0:
		return f.content, "this line has no `:`; write a field as `key: value`", true
	}
	return 0, "", false
}

// quotedExample is the line's `key: value` with the value quoted, or a generic example when the
// line is long or already holds quotes.
func quotedExample(line string, f lineFacts) string {
	key := strings.TrimSpace(line[f.content:f.colons[0]])
	end := len(line)
	if f.comment >= 0 {
		end = f.comment
	}
	value := strings.TrimSpace(line[f.colons[0]+1 : end])
	if strings.ContainsAny(key+value, `"'\`) || utf8.RuneCountInString(key+value) > 60 {
		return "`key: \"a: b\"`"
	}
	return "`" + key + `: "` + value + `"` + "`"
}

// openBracket finds the [ or { left open by the lines from yaml.v3's reported line (where the flow
// collection began, or the line above it) to the broken one: its line (1-based) and byte index.
func openBracket(lines []string, reported int) (int, int, bool) {
	for n := len(lines); n >= max(reported, 1); n-- {
		if open := scanLine(lines[n-1]).open; len(open) > 0 {
			return n, open[len(open)-1], true
		}
	}
	return 0, 0, false
}

// lineFacts is what one line shows of YAML's structure, read as YAML's scanner reads a line:
// indentation, list dashes, quotes, flow brackets, `: ` separators and comments.
type lineFacts struct {
	indent     int   // leading spaces
	content    int   // byte index of the first character after the indentation and any `- `
	dash       bool  // the line is a list item: its content follows `- `
	tab        int   // byte index of a tab in the indentation or right after a `-`; -1 if none
	colons     []int // byte indexes of `: ` separators outside quotes and brackets
	openQuote  int   // byte index of a quote not closed on the line; -1 if none
	afterQuote int   // byte index of text after a closing quote that cannot follow it; -1 if none
	reserved   int   // byte index of a value starting with @ or a backtick; -1 if none
	open       []int // byte indexes of [ and { still open at the end of the line
	comment    int   // byte index of a comment's #; -1 if none
}

// scanLine reads one line. It does not know what the lines before it opened (a quoted or flow
// value continued from above, a block scalar): it is asked only about the broken line.
func scanLine(s string) lineFacts {
	f := lineFacts{tab: -1, openQuote: -1, afterQuote: -1, reserved: -1, comment: -1}
	i := 0
	for i < len(s) && s[i] == ' ' {
		i++
	}
	f.indent = i
	for i < len(s) { // indentation: spaces, tabs and `- ` list indicators
		switch {
		case s[i] == ' ':
		case s[i] == '\t':
			if f.tab < 0 {
				f.tab = i
			}
		case s[i] == '-' && blankAt(s, i+1):
			f.dash = true
		default:
			f.content = i
			scanContent(s, i, &f)
			return f
		}
		i++
	}
	f.content = len(s)
	return f
}

// scanContent reads s from i, the start of a line's content.
func scanContent(s string, i int, f *lineFacts) {
	start := true   // a value may start at i
	quoted := false // the last value was a quoted one, just closed
	for i < len(s) {
		c := s[i]
		switch {
		case c == ' ' || c == '\t':
			i++
			continue
		case c == '#' && (i == 0 || s[i-1] == ' ' || s[i-1] == '\t'):
			f.comment = i
			return
		case c == ':' && blankAt(s, i+1):
			if len(f.open) == 0 {
				f.colons = append(f.colons, i)
			}
			start, quoted = true, false
			i++
			continue
		case len(f.open) > 0 && c == ',':
			start, quoted = true, false
			i++
			continue
		case len(f.open) > 0 && (c == ']' || c == '}'):
			f.open = f.open[:len(f.open)-1]
			start, quoted = false, false
			i++
			continue
		case quoted && f.afterQuote < 0:
			f.afterQuote = i
		}
		if !start {
			i = plainEnd(s, i, len(f.open) > 0)
			continue
		}
		switch c {
		case '"', '\'':
			end := quoteEnd(s, i)
			if end < 0 {
				f.openQuote = i
				return
			}
			i, start, quoted = end, false, true
			continue
		case '[', '{':
			f.open = append(f.open, i)
			i++
			continue
		case '@', '`':
			if f.reserved < 0 {
				f.reserved = i
			}
		}
		start = false
		i = plainEnd(s, i, len(f.open) > 0)
	}
}

// plainEnd is where the plain (unquoted) text starting at i ends: at a `: `, a ` #`, the end of the
// line, or inside brackets at , ] or }.
func plainEnd(s string, i int, flow bool) int {
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c == ':' && blankAt(s, i+1):
			return i
		case c == '#' && i > 0 && (s[i-1] == ' ' || s[i-1] == '\t'):
			return i
		case flow && (c == ',' || c == ']' || c == '}'):
			return i
		}
	}
	return i
}

// quoteEnd is the index just past the quote closing the one at i, or -1 if the line does not close it.
func quoteEnd(s string, i int) int {
	q := s[i]
	for j := i + 1; j < len(s); j++ {
		switch {
		case q == '"' && s[j] == '\\':
			j++
		case q == '\'' && s[j] == '\'' && j+1 < len(s) && s[j+1] == '\'':
			j++
		case s[j] == q:
			return j + 1
		}
	}
	return -1
}

// blankAt reports whether s has a space, a tab or its end at i.
func blankAt(s string, i int) bool {
	return i >= len(s) || s[i] == ' ' || s[i] == '\t'
}
