package conversation

import (
	"strings"
	"testing"
)

// TestSplitKeepsTokensWhole is the regression of what adapters/slack FuzzChunks found: a reply of
// links with no space or line break between them was cut inside a <https://...|label> token, so
// one message ended in "<http" and the next began with "s://...>". FuzzSplit then found that a
// token at the very start of a one-byte window made an empty chunk, and Split never ended
// (testdata/fuzz/FuzzSplit/f2bff557c965da3d).
func TestSplitKeepsTokensWhole(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		in    string
		limit int
		want  []string
	}{
		{"cut moves to the token's start", "<https://a|x>0<https://b|y>", 20, []string{"<https://a|x>0", "<https://b|y>"}},
		{"a token longer than half the window is cut", "ab<https://example.com/long>", 12,
			[]string{"ab<https://e", "xample.com/l", "ong>"}},
		{"a lone < is not a token", "a < b and more words here", 10, []string{"a < b and ", "more words", " here"}},
		{"a > on the next line does not close it", "aaaaaa<bb\n>", 8, []string{"aaaaaa<b", "b\n>"}},
		{"a token at the start is cut, not left for a next chunk forever", "<ab>", 1, []string{"<", "a", "b", ">"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Split(tt.in, tt.limit)
			if strings.Join(got, "|") != strings.Join(tt.want, "|") {
				t.Errorf("Split(%q, %d) = %q, want %q", tt.in, tt.limit, got, tt.want)
			}
			checkSplit(t, tt.in, tt.limit)
		})
	}
}
