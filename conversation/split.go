package conversation

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Split cuts s into chunks of at most limit bytes for platforms that cap message length. It cuts at
// a paragraph break, else a line break, else a rune boundary (never inside a UTF-8 sequence, and
// not inside a <...> token when the token can start the next chunk instead). A chunk that would
// end inside a ``` code fence gets a closing fence line, and the next chunk reopens the fence with
// the same info string, so every chunk renders on its own; these fence lines
// are the only text added. Limits too small to hold the fence lines drop the info string, and below
// that fences are not repaired. limit <= 0 means no limit. A single rune longer than limit is
// emitted alone. Split always returns at least one chunk.
func Split(s string, limit int) []string {
	pieces := split(s, limit)
	out := make([]string, len(pieces))
	for i, p := range pieces {
		out[i] = p.open + p.body + p.close
	}
	return out
}

// piece is one chunk: body is a slice of the input, open and close the fence lines added around it.
type piece struct{ open, body, close string }

func split(s string, limit int) []piece {
	if limit <= 0 {
		return []piece{{body: s}}
	}
	var out []piece
	var f fence
	repair := true
	for first := true; first || s != ""; first = false {
		open := ""
		if f.marker != "" {
			open, repair = reopen(f, limit)
			if !repair {
				f = fence{}
			}
		}
		p, end := fit(s, open, f, limit, repair)
		out = append(out, p)
		s, f = s[len(p.body):], end
	}
	return out
}

// reopen returns the line that reopens fence f in a new chunk, dropping the info string when the
// limit is too small for it; repair is false when even the bare fence lines do not fit.
func reopen(f fence, limit int) (open string, repair bool) {
	room := func(open string) bool { return len(open)+len(f.marker)+1+utf8.UTFMax <= limit }
	if open := f.marker + f.info + "\n"; room(open) {
		return open, true
	}
	if open := f.marker + "\n"; room(open) {
		return open, true
	}
	return "", false
}

// fit finds the longest good body starting s that fits limit with open before it and the fence it
// leaves open closed after it. It returns the piece and the fence state after the body.
func fit(s, open string, f fence, limit int, repair bool) (piece, fence) {
	w := limit - len(open)
	for {
		cut := cutPoint(s, w)
		if repair {
			cut = avoidDanglingOpener(f, s, cut, w)
		}
		p := piece{open: open, body: s[:cut]}
		end := fence{}
		if repair {
			end = f.advance(p.body)
			p.close = end.closing(p.body)
		}
		size := len(p.open) + len(p.body) + len(p.close)
		if size <= limit || cut <= firstRune(s) {
			return p, end
		}
		w = min(w-1, cut-(size-limit))
	}
}

// avoidDanglingOpener moves a cut that would end the body right after a fence opener, which would
// show an empty code block and then the real one in the next chunk: to the start of the opener's
// line when that leaves something in the chunk, else into the next line.
func avoidDanglingOpener(f fence, s string, cut, w int) int {
	body := s[:cut]
	lineStart := strings.LastIndexByte(strings.TrimSuffix(body, "\n"), '\n') + 1
	if f.advance(body[:lineStart]).marker != "" || f.advance(body).marker == "" {
		return cut
	}
	if lineStart > 0 {
		return lineStart
	}
	if w < len(s) {
		return max(cut, runeFloor(s, w))
	}
	return cut
}

// cutPoint returns where to end a body of at most w bytes of s: after the last paragraph break if
// that keeps at least half the window, else after the last line break if that keeps half the window
// or the next line fits a chunk of its own, else at a rune boundary (the next line must be cut
// anyway, so cutting early only makes more chunks).
func cutPoint(s string, w int) int {
	if w >= len(s) {
		return len(s)
	}
	w = runeFloor(s, w)
	if w <= 0 {
		return firstRune(s)
	}
	para := strings.LastIndex(s[:w], "\n\n") + 2
	line := strings.LastIndexByte(s[:w], '\n') + 1
	switch {
	case para >= 2 && para >= w/2:
		return para
	case line > 0 && (line >= w/2 || lineLen(s[line:]) <= w):
		return line
	}
	return avoidToken(s, w)
}

// avoidToken moves a cut that falls inside a <...> token (a Slack link or mention, a Discord
// mention or timestamp) back to the token's start, when that keeps at least half the window: a
// token cut in two is broken text in both messages.
func avoidToken(s string, w int) int {
	open := strings.LastIndexByte(s[:w], '<')
	if open <= 0 || open < w/2 || strings.IndexByte(s[open:w], '>') >= 0 {
		return w // an empty body would never end the split
	}
	if end := strings.IndexAny(s[w:], ">\n"); end < 0 || s[w+end] != '>' {
		return w // no '>' closes it on this line: not a token
	}
	return open
}

// lineLen returns the length of the first line of s, its line break included.
func lineLen(s string) int {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return i + 1
	}
	return len(s)
}

// runeFloor moves w back to the start of the UTF-8 sequence it falls inside, if any. Invalid bytes
// are sequences of one byte.
func runeFloor(s string, w int) int {
	for start := w - 1; start >= 0 && start > w-utf8.UTFMax; start-- {
		if utf8.RuneStart(s[start]) {
			if _, size := utf8.DecodeRuneInString(s[start:]); start+size > w {
				return start
			}
			return w
		}
	}
	return w
}

// firstRune returns the byte length of the first rune of s (1 for an invalid byte).
func firstRune(s string) int {
	_, n := utf8.DecodeRuneInString(s)
	return max(n, 1)
}

// fence is the state of a Markdown text: inside a backtick code fence (marker is the backtick run
// that opened it) or not (marker empty).
type fence struct{ marker, info string }

// advance returns the state after text, reading every line of it, the last partial one included,
// since that is how a chunk ending there renders.
func (f fence) advance(text string) fence {
	for line := range strings.SplitSeq(text, "\n") {
		if f.marker == "" {
			if m, info, ok := openingFence(line); ok {
				f = fence{marker: m, info: info}
			}
		} else if closesFence(line, f.marker) {
			f = fence{}
		}
	}
	return f
}

// closing returns the fence line that closes f after body, or "" when f is not open.
func (f fence) closing(body string) string {
	switch {
	case f.marker == "":
		return ""
	case strings.HasSuffix(body, "\n"):
		return f.marker
	}
	return "\n" + f.marker
}

// openingFence recognises a CommonMark backtick fence opener: up to three spaces of indent, at
// least three backticks, and an info string without backticks.
func openingFence(line string) (marker, info string, ok bool) {
	n, rest := backtickRun(line)
	if n < 3 || strings.Contains(rest, "`") {
		return "", "", false
	}
	return strings.Repeat("`", n), strings.TrimSpace(rest), true
}

// closesFence recognises a line that closes a fence opened with marker: at least as many backticks
// and nothing but spaces or tabs after them (and the \r of a \r\n line ending).
func closesFence(line, marker string) bool {
	n, rest := backtickRun(line)
	return n >= len(marker) && strings.Trim(rest, " \t\r") == ""
}

// backtickRun returns the length of the backtick run at the start of line after up to three spaces
// of indent, and what follows it.
func backtickRun(line string) (int, string) {
	for i := 0; i < 3 && strings.HasPrefix(line, " "); i++ {
		line = line[1:]
	}
	n := len(line) - len(strings.TrimLeft(line, "`"))
	return n, line[n:]
}

// Preview returns at most n runes of s for a one-line summary: runs of whitespace (newlines
// included) become one space, and "…" is appended when anything was cut.
func Preview(s string, n int) string {
	s = strings.Join(strings.FieldsFunc(s, unicode.IsSpace), " ")
	if utf8.RuneCountInString(s) <= max(n, 0) {
		return s
	}
	i := 0
	for range max(n, 0) {
		_, size := utf8.DecodeRuneInString(s[i:])
		i += size
	}
	return s[:i] + "…"
}
