package slack

import (
	"strings"

	"threadflow/conversation"
)

// zeroWidthSpace splits runs of backticks so text can never open or close a code fence.
const zeroWidthSpace = "\u200b"

// Render turns t into Slack mrkdwn. Bot-authored spans (Plain, Strong, Code, CodeBlock) keep their
// meaning; UserText and Output have &, < and > escaped, the only characters Slack needs to turn
// text into a mention (<@U1>), a channel ping (<!channel>) or a link, so neither can ever ping.
func Render(t conversation.Text) string {
	var w mrkdwnWriter
	for _, sp := range t {
		switch sp.Kind {
		case conversation.Plain:
			w.write(sp.S)
		case conversation.Strong:
			if sp.S != "" {
				w.write("*" + sp.S + "*")
			}
		case conversation.Code:
			if sp.S != "" {
				w.write("`" + strings.ReplaceAll(escape(sp.S), "`", "ˋ") + "`")
			}
		case conversation.CodeBlock:
			w.block(breakBackticks(escape(strings.TrimSuffix(sp.S, "\n"))))
		case conversation.Output:
			w.output(convertMarkdown(sp.S))
		default: // UserText, and any kind added later, is untrusted
			w.write(breakFences(escape(sp.S)))
		}
	}
	return w.String()
}

// mrkdwnWriter puts code fences on lines of their own, which Slack and conversation.Split both
// expect, whatever text comes before or after them.
type mrkdwnWriter struct {
	strings.Builder
	afterBlock bool
}

func (w *mrkdwnWriter) write(s string) {
	if s == "" {
		return
	}
	if w.afterBlock && !strings.HasPrefix(s, "\n") {
		w.WriteByte('\n')
	}
	w.afterBlock = false
	w.WriteString(s)
}

func (w *mrkdwnWriter) block(content string) {
	w.lineStart()
	w.WriteString("```\n" + content + "\n```")
	w.afterBlock = true
}

// output writes converted Markdown, whose first or last line may be a fence.
func (w *mrkdwnWriter) output(s string) {
	if strings.HasPrefix(s, "```") {
		w.lineStart()
	}
	w.write(s)
	w.afterBlock = strings.HasSuffix(s, "```")
}

func (w *mrkdwnWriter) lineStart() {
	if w.Len() > 0 && !strings.HasSuffix(w.String(), "\n") {
		w.WriteByte('\n')
	}
	w.afterBlock = false
}

// escape applies Slack's three mandatory entity escapes. Slack shows the characters unchanged,
// code blocks included.
func escape(s string) string {
	if !strings.ContainsAny(s, "&<>") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 8)
	for _, r := range s {
		switch r {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

// breakBackticks inserts a zero-width space between consecutive backticks so that content placed
// inside a fence can never close it.
func breakBackticks(s string) string {
	if !strings.Contains(s, "``") {
		return s
	}
	var b strings.Builder
	prev := rune(0)
	for _, r := range s {
		if r == '`' && prev == '`' {
			b.WriteString(zeroWidthSpace)
		}
		b.WriteRune(r)
		prev = r
	}
	return b.String()
}

// breakFences neutralises only runs of three or more backticks, leaving `inline code` a person
// typed readable.
func breakFences(s string) string {
	if !strings.Contains(s, "```") {
		return s
	}
	return breakBackticks(s)
}
