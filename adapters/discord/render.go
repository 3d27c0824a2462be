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
// text is fully escaped, workflow output keeps what renderOutput allows, and in both every mention
// is neutralised. Messages are also sent with no allowed mentions, so this is the second of two
// locks.
func Render(t conversation.Text) string {
	var w contentWriter
	for _, sp := range t {
		switch sp.Kind {
		case conversation.Plain:
			w.write(sp.S)
		case conversation.Strong:
			if sp.S != "" {
				w.write("**" + sp.S + "**")
			}
		case conversation.Code:
			w.write(codeSpan(sp.S))
		case conversation.CodeBlock:
			w.block(breakFences(strings.TrimSuffix(sp.S, "\n")))
		case conversation.UserText:
			w.write(neutralise(markdownEscaper.Replace(sp.S)))
		case conversation.Output:
			w.output(renderOutput(sp.S))
		}
	}
	return w.String()
}

// contentWriter puts code fences on lines of their own, which conversation.Split expects, whatever
// text comes before or after them.
type contentWriter struct {
	strings.Builder
	afterBlock bool
}

func (w *contentWriter) write(s string) {
	if s == "" {
		return
	}
	if w.afterBlock && !strings.HasPrefix(s, "\n") {
		w.WriteByte('\n')
	}
	w.afterBlock = false
	w.WriteString(s)
}

// block writes a fenced block starting on its own line.
func (w *contentWriter) block(content string) {
	w.lineStart()
	w.WriteString("```\n" + content + "\n```")
	w.afterBlock = true
}

// output writes rendered output, whose first or last line may be a fence.
func (w *contentWriter) output(s string) {
	if strings.HasPrefix(s, "```") {
		w.lineStart()
	}
	w.write(s)
	w.afterBlock = strings.HasSuffix(s, "```")
}

func (w *contentWriter) lineStart() {
	if w.Len() > 0 && !strings.HasSuffix(w.String(), "\n") {
		w.WriteByte('\n')
	}
	w.afterBlock = false
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
