package conversation

import "testing"

// A span of a kind Markup does not know is untrusted: it is written as UserText, never as is.
func TestMarkupWritesUnknownKindsAsUserText(t *testing.T) {
	t.Parallel()
	m := Markup{UserText: func(s string) string { return "[" + s + "]" }}
	if got := m.Render(T(P("a "), Span{Kind: Output + 1, S: "<@1>"})); got != "a [<@1>]" {
		t.Errorf("Render = %q, want the new kind escaped as user text", got)
	}
}
