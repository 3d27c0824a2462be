package conversation

import "slices"

// SpanKind says how an adapter must render a span. The distinction between trusted text the bot wrote
// and untrusted text that came from a user or a workflow is what keeps mentions and markup from being
// injected: adapters escape UserText and Output, and render only Plain, Strong and Code as markup.
type SpanKind int

// Span kinds.
const (
	Plain     SpanKind = iota // bot-authored text, rendered as is
	Strong                    // bot-authored emphasis
	Code                      // inline code; the content is escaped for the platform's code span
	CodeBlock                 // fenced block; content kept verbatim inside a fence
	UserText                  // untrusted text from a person: every markup and mention escaped
	Output                    // untrusted workflow or agent output: inert text, some Markdown (OutputLines)
	// Mention pings a person or group the workflow's YAML names (a gate's approvers, escalate_to):
	// S is a platform-qualified id or group. Only an adapter of that platform renders it as a
	// mention; user text never becomes one (the bot builds these only from the YAML's lists).
	Mention
)

// Span is one piece of a Text.
type Span struct {
	Kind SpanKind
	S    string
}

// Text is a reply body built from spans. Newlines inside spans separate lines.
type Text []Span

// T builds a Text from spans.
func T(spans ...Span) Text { return Text(spans) }

// P is bot-authored plain text.
func P(s string) Span { return Span{Kind: Plain, S: s} }

// B is bot-authored bold text.
func B(s string) Span { return Span{Kind: Strong, S: s} }

// C is inline code, such as a run id or a command to copy.
func C(s string) Span { return Span{Kind: Code, S: s} }

// Block is a fenced code block.
func Block(s string) Span { return Span{Kind: CodeBlock, S: s} }

// U is untrusted user text.
func U(s string) Span { return Span{Kind: UserText, S: s} }

// O is untrusted workflow output.
func O(s string) Span { return Span{Kind: Output, S: s} }

// M mentions a person or group a workflow names (a platform-qualified id, `slack:group:S…`,
// `discord:role:…`).
func M(id string) Span { return Span{Kind: Mention, S: id} }

// Mentions are the ids the text mentions, in order, each once.
func (t Text) Mentions() []string {
	var out []string
	for _, s := range t {
		if s.Kind == Mention && !slices.Contains(out, s.S) {
			out = append(out, s.S)
		}
	}
	return out
}

// Append returns t with spans added.
func (t Text) Append(spans ...Span) Text { return append(t, spans...) }

// String returns the text without any markup, for logs of bot-authored text and for tests.
func (t Text) String() string {
	n := 0
	for _, s := range t {
		n += len(s.S)
	}
	b := make([]byte, 0, n)
	for _, s := range t {
		b = append(b, s.S...)
	}
	return string(b)
}
