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

// markup is what Discord shows of each span. Bot-authored spans keep their markup; user text is
// fully escaped, workflow output keeps what renderOutput allows, and in both every mention is
// neutralised.
var markup = conversation.Markup{
	Strong:   func(s string) string { return "**" + s + "**" },
	Code:     codeSpan,
	Block:    breakFences,
	UserText: func(s string) string { return neutralise(markdownEscaper.Replace(s)) },
	Output:   renderOutput,
	Mention:  mention,
}

// Render turns a Text into Discord message content with markup. Messages are also sent allowing
// only the mentions the workflow names (allowedMentions), so neutralising the others here is the
// second of two locks.
func Render(t conversation.Text) string { return markup.Render(t) }

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
