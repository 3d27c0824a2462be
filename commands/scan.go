package commands

import (
	"fmt"
	"strings"
	"unicode"
)

// quoteClass maps a rune to the ASCII quote it stands for. Phones and chat clients replace quotes
// with typographic ones as people type, so “ ” „ ‟ « » act as " and ‘ ’ ‚ ‛ act as '.
func quoteClass(r rune) rune {
	switch r {
	case '"', '“', '”', '„', '‟', '«', '»':
		return '"'
	case '\'', '‘', '’', '‚', '‛':
		return '\''
	}
	return 0
}

// escapableInDouble reports whether a backslash before r inside double quotes escapes it. As in the
// shell, other backslashes inside double quotes are literal, so Windows paths survive.
func escapableInDouble(r rune) bool {
	return r == '\\' || r == '`' || r == '$' || quoteClass(r) == '"'
}

// token is one shell word; col is the 1-based rune column where it starts.
type token struct {
	val string
	col int
}

// scanner splits text into shell words lazily, so a command can take the rest of the line as free
// text (approve comments) without that text having to be valid shell.
type scanner struct {
	rs  []rune
	pos int
}

func newScanner(s string) *scanner { return &scanner{rs: []rune(s)} }

// next returns the next word; ok is false at the end of the text.
func (s *scanner) next() (t token, ok bool, err error) {
	for s.pos < len(s.rs) && unicode.IsSpace(s.rs[s.pos]) {
		s.pos++
	}
	if s.pos == len(s.rs) {
		return token{}, false, nil
	}
	t.col = s.pos + 1
	var b strings.Builder
	for s.pos < len(s.rs) && !unicode.IsSpace(s.rs[s.pos]) {
		if err := s.scanPart(&b); err != nil {
			return token{}, false, err
		}
	}
	t.val = b.String()
	return t, true, nil
}

// scanPart consumes one unquoted rune, one backslash escape or one quoted section.
func (s *scanner) scanPart(b *strings.Builder) error {
	r := s.rs[s.pos]
	switch {
	case r == '\\':
		s.pos++
		if s.pos == len(s.rs) {
			b.WriteRune('\\') // a trailing backslash escapes nothing: keep it
			return nil
		}
		b.WriteRune(s.rs[s.pos])
		s.pos++
	case quoteClass(r) == '\'':
		return s.scanQuoted(b, '\'', func(rune) bool { return false })
	case quoteClass(r) == '"':
		return s.scanQuoted(b, '"', escapableInDouble)
	default:
		b.WriteRune(r)
		s.pos++
	}
	return nil
}

// scanQuoted consumes a quoted section opened at s.pos and closed by any rune of the same class.
func (s *scanner) scanQuoted(b *strings.Builder, class rune, escapes func(rune) bool) error {
	open, col := s.rs[s.pos], s.pos+1
	for s.pos++; s.pos < len(s.rs); s.pos++ {
		r := s.rs[s.pos]
		if quoteClass(r) == class {
			s.pos++
			return nil
		}
		if r == '\\' && s.pos+1 < len(s.rs) && escapes(s.rs[s.pos+1]) {
			s.pos++
			r = s.rs[s.pos]
		}
		b.WriteRune(r)
	}
	return &ParseError{
		Msg: fmt.Sprintf("unclosed %c starting at column %d: add the closing quote, or put a backslash before it to mean the character itself", open, col),
		Col: col,
	}
}

// rest returns the unscanned remainder of the text as typed, trimmed.
func (s *scanner) rest() string { return strings.TrimSpace(string(s.rs[s.pos:])) }
