package web

import (
	"html/template"
	"strings"

	"threadflow/conversation"
)

// Render returns t as HTML. Every span is escaped, bot-authored ones included (a suggested command
// quotes what a user typed); only the markup added here is trusted: <strong> for Strong, <code>
// for Code, <pre><code> for CodeBlock, and classes that let the page style untrusted text. Line
// breaks are kept by the page's CSS (white-space: pre-wrap), not by inserted tags.
func Render(t conversation.Text) template.HTML {
	var b strings.Builder
	for _, sp := range t {
		s := template.HTMLEscapeString(sp.S)
		switch sp.Kind {
		case conversation.Strong:
			b.WriteString("<strong>" + s + "</strong>")
		case conversation.Code:
			b.WriteString("<code>" + s + "</code>")
		case conversation.CodeBlock:
			b.WriteString("<pre><code>" + s + "</code></pre>")
		case conversation.UserText:
			b.WriteString(`<span class="user-text">` + s + "</span>")
		case conversation.Output:
			b.WriteString(`<span class="output">` + s + "</span>")
		default:
			b.WriteString(s)
		}
	}
	return template.HTML(b.String()) //nolint:gosec // built only from escaped spans and fixed tags
}
