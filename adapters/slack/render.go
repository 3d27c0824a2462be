package slack

import (
	"strings"

	"threadflow/conversation"
)

// zeroWidthSpace splits runs of backticks so text can never open or close a code fence.
const zeroWidthSpace = "\u200b"

// markup is what Slack shows of each span. Bot-authored spans (Plain, Strong, Code, CodeBlock) keep
// their meaning; UserText and Output have &, < and > escaped, the only characters Slack needs to
// turn text into a mention (<@U1>), a channel ping (<!channel>) or a link, so neither can ever ping.
var markup = conversation.Markup{
	Strong:   func(s string) string { return "*" + s + "*" },
	Code:     codeSpan,
	Block:    func(s string) string { return breakBackticks(escape(s)) },
	UserText: func(s string) string { return breakFences(escape(s)) },
	Output:   convertMarkdown,
	Mention:  mention,
}

// Render turns t into Slack mrkdwn with markup.
func Render(t conversation.Text) string { return markup.Render(t) }

// codeSpan renders inline code: escaped, with look-alikes for backticks, which would end the span.
func codeSpan(s string) string {
	if s == "" {
		return ""
	}
	return "`" + strings.ReplaceAll(escape(s), "`", "ˋ") + "`"
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
