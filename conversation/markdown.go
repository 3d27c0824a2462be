package conversation

import (
	"net/url"
	"regexp"
	"strings"
)

// OutputLineKind says how a renderer must treat one line of an Output span.
type OutputLineKind int

// Output line kinds.
const (
	ProseLine  OutputLineKind = iota // Markdown text outside code blocks
	FenceOpen                        // opens a code block; Text is its info string ("go"), possibly empty
	CodeLine                         // a line inside a code block, to be shown verbatim
	FenceClose                       // closes the block the last FenceOpen opened
)

// OutputLine is one line of an Output span.
type OutputLine struct {
	Kind OutputLineKind
	Text string
}

// OutputLines reads untrusted Markdown (an Output span) line by line, finding its code blocks as
// Split does: a block opens at a line of three or more backticks (up to three spaces of indent, an
// info string without backticks) and closes at a line of at least as many backticks and nothing
// else. What prose and code may show is each platform's decision; where blocks start and end is
// decided here, once, and the result is balanced whatever the input: a block still open at the end
// is closed there, so it cannot run over the text after the span, and a block without a character
// in it is dropped (Discord pairs the fence that opens an empty block with the next fence it finds,
// which may be the bot's own). A renderer writes every FenceOpen and FenceClose as a fence line of
// its own and must break any other run of backticks that its platform would read as a fence.
func OutputLines(s string) []OutputLine {
	var out []OutputLine
	var f fence
	open := 0 // index in out of the FenceOpen of the block being read
	for line := range strings.SplitSeq(s, "\n") {
		switch {
		case f.marker == "":
			marker, info, ok := openingFence(line)
			if !ok {
				out = append(out, OutputLine{Kind: ProseLine, Text: line})
				continue
			}
			f, open = fence{marker: marker, info: info}, len(out)
			out = append(out, OutputLine{Kind: FenceOpen, Text: info})
		case closesFence(line, f.marker):
			out, f = closeBlock(out, open), fence{}
		default:
			out = append(out, OutputLine{Kind: CodeLine, Text: line})
		}
	}
	if f.marker != "" {
		out = closeBlock(out, open)
	}
	return out
}

// closeBlock ends the block opened at out[open], or drops it when no line of it has a character.
func closeBlock(out []OutputLine, open int) []OutputLine {
	for _, l := range out[open+1:] {
		if l.Text != "" {
			return append(out, OutputLine{Kind: FenceClose})
		}
	}
	return out[:open]
}

// Output's prose is read by the same Markdown rules on every platform; how a heading or a link is
// then shown is each platform's decision.
const (
	// MarkdownLink matches a link, [label](url), [label](<url>), either with a "title". Groups: 1
	// the label, 2 or 3 the URL.
	MarkdownLink = `\[([^\]\n]*)\]\(\s*(?:<([^<>\n]*)>|((?:[^()\s]|\([^()\s]*\))+))(?:\s+(?:"[^"\n]*"|'[^'\n]*'))?\s*\)`
	// MarkdownAutolink matches an autolink, <url>, its URL the group.
	MarkdownAutolink = `<([a-zA-Z][a-zA-Z0-9+.-]*:[^\s<>]*)>`
)

var mdHeading = regexp.MustCompile(`^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$`)

// Heading returns the text of a Markdown heading line ("## Summary ##" gives "Summary"), without
// the bold it often carries itself ("## **Summary**"): platforms show a heading as a bold line.
func Heading(line string) (text string, ok bool) {
	if !strings.Contains(line, "#") { // every heading has one; the regular expression is slow
		return "", false
	}
	m := mdHeading.FindStringSubmatch(line)
	if m == nil {
		return "", false
	}
	return unbold(m[1]), true
}

// unbold removes one pair of ** or __ around the whole of s.
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

// WebURL reports whether an output link's target is one a platform may show as a link: an
// http(s) URL with a host. Other schemes (javascript:, a platform's own) and relative paths stay
// text.
func WebURL(target string) bool {
	u, err := url.Parse(target)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}
