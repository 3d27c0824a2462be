package commands

import (
	"strings"
	"unicode"
)

// Quote returns arg as one word of a command: unchanged when it needs no quoting, otherwise in double
// quotes with backslash, double quote, backtick and dollar escaped. The backtick matters because
// suggested commands are shown inside Markdown code spans, where a raw backtick would end the span.
func Quote(arg string) string {
	if arg != "" && strings.IndexFunc(arg, needsQuote) < 0 {
		return arg
	}
	var b strings.Builder
	b.Grow(len(arg) + 2)
	b.WriteByte('"')
	for _, r := range arg {
		if escapableInDouble(r) {
			b.WriteByte('\\')
		}
		b.WriteRune(r)
	}
	b.WriteByte('"')
	return b.String()
}

// needsQuote reports whether r must not appear in an unquoted word.
func needsQuote(r rune) bool {
	if unicode.IsLetter(r) || unicode.IsDigit(r) {
		return false
	}
	return !strings.ContainsRune("-_./:=@,+%", r)
}
