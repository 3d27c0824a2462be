package discord

import (
	"regexp"
	"strings"

	"threadflow/conversation"
)

var (
	// mdInline finds what output's prose may keep, leftmost first. Groups: 1 a link's label, 2 or 3
	// its URL (conversation.MarkdownLink); 4 an autolink's URL (<url>); 5 a bare http(s) URL,
	// without the punctuation that usually follows one in a sentence; 6 and 7 bold (**x**, __x__);
	// 8 strikethrough (~~x~~).
	mdInline = regexp.MustCompile(conversation.MarkdownLink + `|` + conversation.MarkdownAutolink +
		`|(https?://[^\s<>]*[^\s<>.,:;"')\]])` +
		`|\*\*([^*\n]+?)\*\*|__([^_\n]+?)__` +
		`|~~([^~\n]+?)~~`)
	// fenceLanguage is an info string Discord reads as a language; any other is dropped, or Discord
	// would show it as the first line of code.
	fenceLanguage = regexp.MustCompile(`^[a-zA-Z0-9_+\-.#]+$`)
)

// renderOutput renders untrusted Markdown (workflow and agent output) as Discord Markdown. What
// output may keep on Discord is decided here:
//
//   - Links show where they go. [label](url) becomes "label (<url>)" for http(s) URLs; autolinks
//     and bare URLs become <url> (which also keeps Discord from previewing them). Every other [ and
//     ] is escaped, so Discord can make no masked link, whose label would hide its URL.
//   - Emphasis stays: **bold**, __bold__ (as **bold**) and ~~strike~~ when closed on the same
//     line, headings as bold lines. It only changes how text that is shown anyway looks. Any other
//     *, _, ~ is escaped, so it cannot pair with the bot's own markup after the span, and so is |,
//     so nothing is hidden behind a spoiler.
//   - Code blocks are those conversation.OutputLines finds, on fence lines of their own (with the
//     language when Discord knows the info string as one), closed within the span. Discord reads
//     ``` anywhere, not only at a line start, so no other three backticks in a row are left: in
//     code a zero-width space breaks them; in prose inline code is kept only as a pair of single
//     backticks on one line, and every other backtick is escaped (a stray ``` shows as typed).
//   - A line starting with > is not a quote: ">>>" would quote the rest of the message.
//   - Mentions are neutralised, as everywhere.
func renderOutput(s string) string {
	lines := conversation.OutputLines(s)
	out := make([]string, len(lines))
	for i, l := range lines {
		switch l.Kind {
		case conversation.FenceOpen:
			out[i] = "```"
			if fenceLanguage.MatchString(l.Text) {
				out[i] += l.Text
			}
		case conversation.FenceClose:
			out[i] = "```"
		case conversation.CodeLine:
			out[i] = breakFences(l.Text)
		default:
			out[i] = proseLine(l.Text)
		}
	}
	return neutralise(strings.Join(out, "\n"))
}

// proseLine renders one line outside code blocks.
func proseLine(line string) string {
	if h, ok := conversation.Heading(line); ok {
		if text := inline(h); text != "" {
			return "**" + text + "**"
		}
		return ""
	}
	rest := strings.TrimLeft(line, " \t")
	if strings.HasPrefix(rest, ">") {
		return line[:len(line)-len(rest)] + `\>` + inline(rest[1:])
	}
	return inline(line)
}

// inline renders the text of a line. A backtick alone pairs with the next backtick when that one
// is alone too, making a code span kept as written; every other backtick is escaped. So no fence or
// code span opens that the line does not close, and a stray ``` shows as typed.
func inline(line string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(line, '`')
		if i < 0 {
			b.WriteString(prose(line))
			return b.String()
		}
		b.WriteString(prose(line[:i]))
		n := backtickRun(line[i:])
		rest := line[i+n:]
		if j := strings.IndexByte(rest, '`'); n == 1 && j >= 0 && backtickRun(rest[j:]) == 1 {
			b.WriteString("`" + rest[:j] + "`")
			line = rest[j+1:]
			continue
		}
		b.WriteString(strings.Repeat("\\`", n))
		line = rest
	}
}

// backtickRun returns how many backticks s starts with.
func backtickRun(s string) int { return len(s) - len(strings.TrimLeft(s, "`")) }

// proseStarts are what every match of mdInline starts with. Text before the first of them is
// escaped without running the regular expression, which is slow on long text.
var proseStarts = []string{"[", "<", "http", "**", "__", "~~"}

// prose renders text outside code: links, URLs and emphasis as renderOutput says, everything else
// escaped.
func prose(s string) string {
	var b strings.Builder
	for {
		start := firstOf(s, proseStarts)
		var m []int
		if start >= 0 {
			m = mdInline.FindStringSubmatchIndex(s[start:])
		}
		if m == nil {
			b.WriteString(escapeProse(s))
			return b.String()
		}
		b.WriteString(escapeProse(s[:start+m[0]]))
		b.WriteString(kept(s[start:], m))
		s = s[start+m[1]:]
	}
}

// firstOf returns the index of the first of subs in s, or -1.
func firstOf(s string, subs []string) int {
	first := -1
	for _, sub := range subs {
		if i := strings.Index(s, sub); i >= 0 && (first < 0 || i < first) {
			first = i
		}
	}
	return first
}

// kept renders the mdInline match m of s.
func kept(s string, m []int) string {
	group := func(i int) string {
		if m[2*i] < 0 {
			return ""
		}
		return s[m[2*i]:m[2*i+1]]
	}
	switch {
	case m[2] >= 0: // a link
		if link, ok := shownLink(group(1), group(2)+group(3)); ok {
			return link
		}
		// Not a link to show: its brackets are text, and what they hold is prose.
		return `\[` + prose(group(1)) + `\]` + prose(s[m[3]+1:m[1]])
	case m[8] >= 0 || m[10] >= 0: // an autolink or a bare URL
		if u, ok := webURL(group(4) + group(5)); ok {
			return "<" + u + ">"
		}
		return escapeProse(s[m[0]:m[1]])
	case m[16] >= 0:
		return "~~" + prose(group(8)) + "~~"
	}
	return "**" + prose(group(6)+group(7)) + "**"
}

// escapeProse backslash-escapes, in output's prose, every character that could start markup reaching
// past its place: masked links ([ and ]), spoilers (||) and emphasis. A backslash is escaped only
// where Discord would read it as an escape, before anything but a letter, a digit or a space, and at
// the end, where other markup follows: "C:\Work" stays as typed.
func escapeProse(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case strings.IndexByte(`*_~|[]`, c) >= 0:
			b.WriteByte('\\')
		case c == '\\' && (i+1 == len(s) || !isWordOrSpace(s[i+1])):
			b.WriteByte('\\')
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// isWordOrSpace reports an ASCII letter, digit or white space: what a Discord escape cannot escape.
func isWordOrSpace(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.IndexByte(" \t\n\r\f\v", c) >= 0
}

// shownLink renders a Markdown link so that Discord shows its URL: "label (<url>)", or "<url>" for
// an empty label or a label that is the URL. It refuses URLs that are not http(s) with a host.
func shownLink(label, target string) (string, bool) {
	u, ok := webURL(target)
	if !ok {
		return "", false
	}
	if label = strings.TrimSpace(label); label == "" || label == target {
		return "<" + u + ">", true
	}
	return prose(label) + " (<" + u + ">)", true
}

// webURL accepts a URL that output may show (conversation.WebURL) and an autolink can hold whole.
func webURL(target string) (string, bool) {
	if strings.ContainsAny(target, "<> \t\n") || !conversation.WebURL(target) {
		return "", false
	}
	return target, true
}

// breakFences breaks every run of three or more backticks, the only thing that ends a code block,
// with a zero-width space after its first backtick, until none is left.
func breakFences(s string) string {
	for strings.Contains(s, "```") {
		s = strings.ReplaceAll(s, "```", "`"+zwsp+"``")
	}
	return s
}
