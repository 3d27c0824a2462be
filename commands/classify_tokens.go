package commands

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// tokenKind says what a token of a reply is.
type tokenKind int

const (
	tkWord  tokenKind = iota // letters, digits and inner apostrophes, lower-cased; also +1 and -1
	tkEmoji                  // one emoji character or a :shortcode:
	tkPunct                  // one punctuation or other symbol character
)

// rtoken is one piece of a reply; start and end are byte offsets into the reply, so a note can be
// quoted exactly as typed.
type rtoken struct {
	kind       tokenKind
	text       string
	start, end int
}

// tokenize splits a reply into words, emoji and punctuation; whitespace and emoji modifiers (skin
// tones, presentation selectors, joiners) are dropped, so 👍🏽 reads as 👍.
func tokenize(s string) []rtoken {
	var out []rtoken
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case unicode.IsSpace(r) || isModifier(r):
			i += n
			continue
		case r == ':':
			if m := shortcodeLen(s[i:]); m > 0 {
				out = append(out, rtoken{tkEmoji, strings.ToLower(s[i : i+m]), i, i + m})
				i += m
				continue
			}
		case (r == '+' || r == '-') && isPlusOne(s[i+1:]):
			out = append(out, rtoken{tkWord, s[i : i+2], i, i + 2})
			i += 2
			continue
		case isWordRune(r):
			end := wordEnd(s, i)
			text := strings.ToLower(strings.ReplaceAll(s[i:end], "\u2019", "'"))
			out = append(out, rtoken{tkWord, text, i, end})
			i = end
			continue
		case unicode.IsSymbol(r) && r > unicode.MaxLatin1:
			out = append(out, rtoken{tkEmoji, string(r), i, i + n})
			i += n
			continue
		}
		out = append(out, rtoken{tkPunct, string(r), i, i + n})
		i += n
	}
	return out
}

func isWordRune(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
}

// isModifier reports emoji presentation selectors, the zero-width joiner and skin tones.
func isModifier(r rune) bool {
	return r == '\uFE0F' || r == '\uFE0E' || r == '\u200D' || (r >= 0x1F3FB && r <= 0x1F3FF)
}

// wordEnd returns where the word starting at i ends; an apostrophe between letters belongs to it.
func wordEnd(s string, i int) int {
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if isWordRune(r) {
			i += n
			continue
		}
		if r == '\'' || r == '\u2019' {
			if next, _ := utf8.DecodeRuneInString(s[i+n:]); unicode.IsLetter(next) {
				i += n
				continue
			}
		}
		break
	}
	return i
}

// isPlusOne reports whether s (after a + or -) is "1" not followed by another word character.
func isPlusOne(s string) bool {
	if !strings.HasPrefix(s, "1") {
		return false
	}
	next, _ := utf8.DecodeRuneInString(s[1:])
	return len(s) == 1 || !isWordRune(next)
}

// shortcodeLen returns the length of a Slack/Discord :name: at the start of s, or 0.
func shortcodeLen(s string) int {
	for i := 1; i < len(s) && i <= 64; i++ {
		c := s[i]
		if c == ':' && i > 1 {
			return i + 1
		}
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '+' || c == '-') {
			return 0
		}
	}
	return 0
}
