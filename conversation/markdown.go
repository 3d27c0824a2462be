package conversation

import "strings"

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
