package conversation

import "strings"

// Markup is how a chat platform writes each kind of span. What each kind may show is the platform's
// decision, made in its adapter; where the spans go relative to each other, code fences on lines of
// their own, is decided once here by Render, because Split and every platform that reads ``` expect
// it.
type Markup struct {
	Strong   func(s string) string // bot-authored emphasis; never called with ""
	Code     func(s string) string // inline code; "" when nothing is to be shown
	Block    func(s string) string // a code block's content, without its final newline; Render adds the fences
	UserText func(s string) string // untrusted text from a person
	Output   func(s string) string // untrusted Markdown; its first or last line may be a fence
	// Mention renders a mention of a platform-qualified id or group; nil (a platform that pings
	// nobody: the terminal, the web) writes the id as UserText.
	Mention func(id string) string
}

// Render writes t with m. Plain text is written as is. A span of a kind added later is written as
// UserText: untrusted until an adapter says otherwise.
func (m Markup) Render(t Text) string {
	var w fencedWriter
	for _, sp := range t {
		switch sp.Kind {
		case Plain:
			w.write(sp.S)
		case Strong:
			if sp.S != "" {
				w.write(m.Strong(sp.S))
			}
		case Code:
			w.write(m.Code(sp.S))
		case CodeBlock:
			w.block(m.Block(strings.TrimSuffix(sp.S, "\n")))
		case Output:
			w.output(m.Output(sp.S))
		case Mention:
			if m.Mention != nil {
				w.write(m.Mention(sp.S))
			} else {
				w.write(m.UserText(sp.S))
			}
		default:
			w.write(m.UserText(sp.S))
		}
	}
	return w.String()
}

// fencedWriter puts code fences on lines of their own, whatever text comes before or after them.
type fencedWriter struct {
	strings.Builder
	afterBlock bool
}

func (w *fencedWriter) write(s string) {
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
func (w *fencedWriter) block(content string) {
	w.lineStart()
	w.WriteString("```\n" + content + "\n```")
	w.afterBlock = true
}

// output writes rendered output, whose first or last line may be a fence.
func (w *fencedWriter) output(s string) {
	if strings.HasPrefix(s, "```") {
		w.lineStart()
	}
	w.write(s)
	w.afterBlock = strings.HasSuffix(s, "```")
}

func (w *fencedWriter) lineStart() {
	if w.Len() > 0 && !strings.HasSuffix(w.String(), "\n") {
		w.WriteByte('\n')
	}
	w.afterBlock = false
}
