package slack

import (
	"net/url"
	"regexp"
	"strings"

	"threadflow/conversation"
)

var (
	mdHeading = regexp.MustCompile(`^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$`)
	// mdLink is a Markdown link, [label](url), [label](<url>) or with a "title", or an autolink
	// <url>. Groups: 1 the label, 2 or 3 the link's URL, 4 the autolink's.
	mdLink   = regexp.MustCompile(`\[([^\]\n]*)\]\(\s*(?:<([^<>\n]*)>|((?:[^()\s]|\([^()\s]*\))+))(?:\s+(?:"[^"\n]*"|'[^'\n]*'))?\s*\)|<([a-zA-Z][a-zA-Z0-9+.-]*:[^\s<>]*)>`)
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
	if m := mdHeading.FindStringSubmatch(line); m != nil {
		if m[1] == "" {
			return ""
		}
		return "*" + convertInline(unbold(m[1])) + "*"
	}
	if strings.HasPrefix(strings.TrimLeft(line, " \t"), ">>>") {
		// ">>>" quotes everything after it, the bot's own text included; a zero-width space before it
		// leaves the line as it was typed.
		return zeroWidthSpace + convertInline(line)
	}
	return convertInline(line)
}

// unbold removes the bold a heading's text often carries itself ("## **Summary**"): the heading is
// made bold already.
func unbold(s string) string {
	for _, d := range []string{"**", "__"} {
		if inner, ok := strings.CutPrefix(s, d); ok && len(inner) > len(d) && strings.HasSuffix(inner, d) {
			if inner = strings.TrimSuffix(inner, d); !strings.Contains(inner, d) {
				return inner
			}
		}
	}
	return s
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
	if strings.ContainsAny(target, "<>|\" \t") {
		return "", false
	}
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", false
	}
	// url.Parse lowers the scheme but the target keeps "HTTP://": write it as Slack expects a link.
	return "<" + escape(u.Scheme+target[len(u.Scheme):]) + ">", true
}
