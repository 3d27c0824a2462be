package discord

import (
	"strings"

	"threadflow/conversation"
)

// zwsp is a zero-width space: placed inside a mention it keeps the text readable but inert.
const zwsp = "\u200b"

// markdownEscaper backslash-escapes every character Discord's markdown gives meaning to.
var markdownEscaper = strings.NewReplacer(
	`\`, `\\`, `*`, `\*`, `_`, `\_`, `~`, `\~`, "`", "\\`", `|`, `\|`, `>`, `\>`, `#`, `\#`,
	`-`, `\-`, `[`, `\[`, `]`, `\]`, `(`, `\(`, `)`, `\)`, `:`, `\:`,
)

// Render turns a Text into Discord message content. Bot-authored spans keep their markup; user
// text is fully escaped and workflow output keeps its Markdown, and in both every mention is
// neutralised. Messages are also sent with no allowed mentions, so this is the second of two locks.
func Render(t conversation.Text) string {
	var b strings.Builder
	for i, sp := range t {
		switch sp.Kind {
		case conversation.Plain:
			b.WriteString(sp.S)
		case conversation.Strong:
			if sp.S != "" {
				b.WriteString("**" + sp.S + "**")
			}
		case conversation.Code:
			b.WriteString(codeSpan(sp.S))
		case conversation.CodeBlock:
			writeBlock(&b, sp.S, i < len(t)-1)
		case conversation.UserText:
			b.WriteString(neutralise(markdownEscaper.Replace(sp.S)))
		case conversation.Output:
			b.WriteString(neutralise(sp.S))
		}
	}
	return b.String()
}

// codeSpan renders inline code. A span cannot hold a newline, and backticks end it: with one
// inside, double backticks delimit; with a double one inside, backticks become look-alikes. Code
// often quotes a user's command (the echo of a slash command), so mentions are broken here too.
func codeSpan(s string) string {
	s = neutralise(strings.ReplaceAll(s, "\n", " "))
	switch {
	case s == "":
		return ""
	case strings.Contains(s, "``"):
		return "`" + strings.ReplaceAll(s, "`", "ˋ") + "`"
	case strings.Contains(s, "`"):
		return "`` " + s + " ``"
	}
	return "`" + s + "`"
}

// writeBlock writes a fenced block starting on its own line. A fence inside the content would
// close the block early, so it is broken with a zero-width space.
func writeBlock(b *strings.Builder, s string, more bool) {
	if b.Len() > 0 && !strings.HasSuffix(b.String(), "\n") {
		b.WriteString("\n")
	}
	b.WriteString("```\n")
	b.WriteString(strings.ReplaceAll(strings.TrimSuffix(s, "\n"), "```", "`"+zwsp+"``"))
	b.WriteString("\n```")
	if more {
		b.WriteString("\n")
	}
}

// neutralise breaks every mention: user (<@id>, <@!id>), role (<@&id>), channel (<#id>),
// @everyone and @here, by putting a zero-width space inside it.
func neutralise(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		b.WriteByte(c)
		next := s[i+1:]
		switch {
		case c == '<' && (strings.HasPrefix(next, "@") || strings.HasPrefix(next, "#")):
			b.WriteString(zwsp)
		case c == '@' && (hasPrefixFold(next, "everyone") || hasPrefixFold(next, "here")):
			b.WriteString(zwsp)
		}
	}
	return b.String()
}

// hasPrefixFold is an ASCII case-insensitive HasPrefix.
func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}
