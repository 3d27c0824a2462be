package execution

import (
	"strings"
	"testing"
)

// The inline value of an output is defined once; these are its rules.
func TestInlineText(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", InlineLimit-1) + "é" // the é straddles the limit
	tests := []struct {
		name      string
		head      string
		truncated bool
		want      string
	}{
		{"trailing newlines go, as with $(...)", "ok\n\n\n", false, "ok"},
		{"CRLF too", "ok\r\n", false, "ok"},
		{"inner and leading whitespace stay", "  a\n\nb \n", false, "  a\n\nb "},
		{"NUL bytes are dropped", "a\x00b", false, "ab"},
		{"invalid UTF-8 is replaced", "a\xffb", false, "a\uFFFDb"},
		{"a character cut by the limit is dropped", long[:InlineLimit], true, strings.Repeat("a", InlineLimit-1)},
		{"a whole character at the end stays", "xé", true, "xé"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := inlineText([]byte(tt.head), tt.truncated); got != tt.want {
				t.Errorf("inlineText(%q) = %q, want %q", tt.head, got, tt.want)
			}
		})
	}
}
