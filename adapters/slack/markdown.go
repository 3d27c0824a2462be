package slack

import (
	"regexp"
	"strings"

	"threadflow/conversation"
)

var (
	// mdLink is a Markdown link or an autolink <url>. Groups: 1 the label, 2 or 3 the link's URL,
	// 4 the autolink's.
	mdLink   = regexp.MustCompile(conversation.MarkdownLink + `|` + conversation.MarkdownAutolink)
	mdBold   = regexp.MustCompile(`\*\*([^*\n]+?)\*\*|__([^_\n]+?)__`)
	mdStrike = regexp.MustCompile(`~~([^~\n]+?)~~`)
)

// convertMarkdown renders untrusted Markdown (workflow and agent output) as mrkdwn. What output
// may keep on Slack is decided here:
//
//   - Links show where they go. [label](url) becomes "label (<url>)", an autolink <url> becomes
//     <url>, for http(s) URLs; never <url|label>, whose label would hide the URL. Anything else,
//     Slack's own <url|label> syntax included, is escaped and shown as typed.
//   - Emphasis stays: **bold** and __bold__ become *bold*, ~~strike~~ becomes ~strike~, headings
//     become bold lines. It only changes how text that is shown anyway looks, and Slack ends it at
//     the end of the line, so it cannot reach the bot's text after the span.
//   - Code blocks are those conversation.OutputLines finds, on fence lines of their own (the info
//     string is dropped: Slack would show it as the first code line), closed within the span; a
//     fence anywhere else, inside a block included, is broken, so no block runs past the span.
//   - A line starting with >>> is not a quote of the rest of the message.
//   - Everything else is escaped like user text, so nothing mentions or pings.
func convertMarkdown(s string) string {
	lines := conversation.OutputLines(s)
	out := make([]string, len(lines))
	for i, l := range lines {
		switch l.Kind {
		case conversation.FenceOpen, conversation.FenceClose:
			out[i] = "```"
		case conversation.CodeLine:
			out[i] = breakBackticks(escape(l.Text))
		default:
			out[i] = convertLine(breakFences(l.Text))
		}
	}
	return strings.Join(out, "\n")
}

func convertLine(line string) string {
	if h, ok := conversation.Heading(line); ok {
		if h == "" {
			return ""
		}
		return "*" + convertInline(h) + "*"
	}
	if strings.HasPrefix(strings.TrimLeft(line, " \t"), ">>>") {
		// ">>>" quotes everything after it, the bot's own text included; a zero-width space before it
		// leaves the line as it was typed.
		return zeroWidthSpace + convertInline(line)
	}
	return convertInline(line)
}

// convertInline converts one line outside fences. Inline code spans are escaped but otherwise left
// alone; an unmatched backtick stays a literal character.
func convertInline(line string) string {
	parts := strings.Split(line, "`")
	var b strings.Builder
	for i, p := range parts {
		if i > 0 {
			b.WriteByte('`')
		}
		if i%2 == 1 && i < len(parts)-1 {
			b.WriteString(escape(p))
			continue
		}
		b.WriteString(convertProse(p))
	}
	return b.String()
}

// convertProse escapes text, turns Markdown links into links that show their URL and converts
// emphasis.
func convertProse(s string) string {
	if !strings.ContainsAny(s, "[<") { // every link starts with one; the regular expression is slow
		return convertEmphasis(escape(s))
	}
	var b strings.Builder
	last := 0
	for _, m := range mdLink.FindAllStringSubmatchIndex(s, -1) {
		b.WriteString(convertEmphasis(escape(s[last:m[0]])))
		if link, ok := shownLink(s, m); ok {
			b.WriteString(link)
		} else {
			b.WriteString(convertEmphasis(escape(s[m[0]:m[1]])))
		}
		last = m[1]
	}
	b.WriteString(convertEmphasis(escape(s[last:])))
	return b.String()
}

func convertEmphasis(s string) string {
	s = mdBold.ReplaceAllString(s, "*$1$2*")
	return mdStrike.ReplaceAllString(s, "~$1~")
}

// shownLink renders the mdLink match m of s so that the URL is what Slack shows: "label (<url>)",
// or "<url>" for an autolink, an empty label or a label that is the URL. It refuses URLs that are
// not http(s) with a host (javascript:, slack:, relative paths) or that hold characters ending a
// Slack link token; the caller then shows the Markdown as escaped text.
func shownLink(s string, m []int) (string, bool) {
	group := func(i int) string {
		if m[2*i] < 0 {
			return ""
		}
		return s[m[2*i]:m[2*i+1]]
	}
	label, target := group(1), group(2)+group(3)+group(4)
	link, ok := slackURL(target)
	if !ok {
		return "", false
	}
	if label = strings.TrimSpace(label); label == "" || label == target {
		return link, true
	}
	return convertEmphasis(escape(label)) + " (" + link + ")", true
}

// slackURL returns <url> for an http(s) URL with a host that Slack can show as a link.
func slackURL(target string) (string, bool) {
	if strings.ContainsAny(target, "<>|\" \t") || !conversation.WebURL(target) {
		return "", false
	}
	// The target may spell its scheme "HTTP://": write it in lower case, as Slack expects a link.
	scheme, rest, _ := strings.Cut(target, ":")
	return "<" + escape(strings.ToLower(scheme)+":"+rest) + ">", true
}
