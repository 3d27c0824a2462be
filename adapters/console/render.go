package console

import (
	"bufio"
	"io"
	"strings"

	"threadflow/conversation"
)

// Render returns t as plain terminal text: Code as `x`, CodeBlock fenced on lines of its own, every
// other kind as is. Terminal control characters are removed from every span, not only from UserText
// and Output, because bot-authored spans such as suggested commands carry user text too.
func Render(t conversation.Text) string {
	var b strings.Builder
	afterBlock := false
	for _, sp := range t {
		s := sanitize(sp.S)
		if afterBlock && s != "" {
			b.WriteString("\n")
			afterBlock = false
		}
		switch sp.Kind {
		case conversation.Code:
			b.WriteString("`" + s + "`")
		case conversation.CodeBlock:
			writeBlock(&b, s)
			afterBlock = true
		default:
			b.WriteString(s)
		}
	}
	return b.String()
}

// writeBlock writes a fenced block starting on its own line.
func writeBlock(b *strings.Builder, s string) {
	if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
		b.WriteString("\n")
	}
	b.WriteString("```\n" + s)
	if !strings.HasSuffix(s, "\n") {
		b.WriteString("\n")
	}
	b.WriteString("```")
}

// sanitize removes what a terminal would interpret rather than show: C0 controls except newline and
// tab (ESC starts escape sequences, CR overwrites a line, BS erases), DEL, and C1 controls (U+009B is
// a one-character CSI on some terminals). Invalid UTF-8 bytes become U+FFFD, so a raw 0x9b byte
// cannot slip through either.
func sanitize(s string) string { return strings.Map(shown, s) }

// shown is sanitize's rule for one rune: the rune, or -1 to drop it.
func shown(r rune) rune {
	switch {
	case r == '\n' || r == '\t':
		return r
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
		return -1
	}
	return r
}

// CopyToTerminal streams r to w as Render shows text: without what a terminal would interpret,
// invalid UTF-8 shown as U+FFFD. For output of any size headed for a terminal (bot workflow logs).
func CopyToTerminal(w io.Writer, r io.Reader) error {
	in, out := bufio.NewReader(r), bufio.NewWriter(w)
	for {
		c, _, err := in.ReadRune()
		if err == io.EOF {
			return out.Flush()
		}
		if err != nil {
			return err
		}
		if c = shown(c); c >= 0 {
			if _, err := out.WriteRune(c); err != nil {
				return err
			}
		}
	}
}
