package slack

import (
	"net/url"
	"regexp"
	"strings"
)

var (
	mdHeading = regexp.MustCompile(`^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$`)
	mdLink    = regexp.MustCompile(`\[([^\]\n]*)\]\(([^)\s]+)\)`)
	mdBold    = regexp.MustCompile(`\*\*([^*\n]+?)\*\*|__([^_\n]+?)__`)
	mdStrike  = regexp.MustCompile(`~~([^~\n]+?)~~`)
)

// convertMarkdown renders untrusted Markdown (workflow and agent output) as mrkdwn: **bold** and
// __bold__ become *bold*, ~~strike~~ becomes ~strike~, [text](url) becomes <url|text> when url is
// http(s), headings become bold lines, and fences are kept (an unclosed one is closed, so the rest
// of the message is not swallowed). Everything else is escaped like user text.
func convertMarkdown(s string) string {
	lines := strings.Split(s, "\n")
	inFence := false
	for i, line := range lines {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			// The info string ("```go") is dropped: Slack would show it as the first code line.
			inFence = !inFence
			lines[i] = "```"
			continue
		}
		if inFence {
			lines[i] = breakBackticks(escape(line))
			continue
		}
		// A fence in mid-line would open a code block Slack never closes.
		lines[i] = convertLine(breakFences(line))
	}
	if inFence {
		lines = append(lines, "```")
	}
	return strings.Join(lines, "\n")
}

func convertLine(line string) string {
	if m := mdHeading.FindStringSubmatch(line); m != nil {
		if m[1] == "" {
			return ""
		}
		return "*" + convertInline(m[1]) + "*"
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

// convertProse escapes text and turns Markdown links and emphasis into mrkdwn.
func convertProse(s string) string {
	var b strings.Builder
	last := 0
	for _, m := range mdLink.FindAllStringSubmatchIndex(s, -1) {
		b.WriteString(convertEmphasis(escape(s[last:m[0]])))
		label, target := s[m[2]:m[3]], s[m[4]:m[5]]
		if link, ok := slackLink(target, label); ok {
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

// slackLink builds <url|label> for an http(s) URL with a host. Anything else (javascript:, slack:,
// relative paths, URLs carrying characters that would end the link token) is refused, and the
// caller shows the Markdown as escaped text.
func slackLink(target, label string) (string, bool) {
	if strings.ContainsAny(target, "<>|\"") {
		return "", false
	}
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", false
	}
	// url.Parse lowers the scheme but the target keeps "HTTP://": write it as Slack expects a link.
	target = u.Scheme + target[len(u.Scheme):]
	label = strings.ReplaceAll(convertEmphasis(escape(label)), "|", "¦")
	if label == "" {
		return "<" + escape(target) + ">", true
	}
	return "<" + escape(target) + "|" + label + ">", true
}
