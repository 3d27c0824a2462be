package conversation

import (
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSplit(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		in    string
		limit int
		want  []string
	}{
		{"empty", "", 10, []string{""}},
		{"no limit", "anything at all", 0, []string{"anything at all"}},
		{"fits", "short", 5, []string{"short"}},
		{"paragraph break first", "para one\nline\n\npara two", 20, []string{"para one\nline\n\n", "para two"}},
		{"line break when no paragraph fits", "aaa\nbbb\nccc", 8, []string{"aaa\nbbb\n", "ccc"}},
		{"line break beats a short paragraph", "a\n\nbbbbbb\ncc\ndddddd", 16, []string{"a\n\nbbbbbb\ncc\n", "dddddd"}},
		{"rune boundary when no break", "abcdefghij", 4, []string{"abcd", "efgh", "ij"}},
		{"never inside a rune", "ééé", 3, []string{"é", "é", "é"}},
		{"emoji kept whole", "a👍b", 4, []string{"a", "👍", "b"}},
		{"rune longer than the limit", "👍", 2, []string{"👍"}},
		{
			"fence closed and reopened with its info string",
			"```go\nline1\nline2\nline3\n```\n", 20,
			[]string{"```go\nline1\n```", "```go\nline2\n```", "```go\nline3\n```\n"},
		},
		{
			"long code line cut mid-line",
			"```\nabcdefghijklmnopqrstuvwxyz\n```", 16,
			[]string{"```\nabcdefgh\n```", "```\nijklmnop\n```", "```\nqrstuvwx\n```", "```\nyz\n```"},
		},
		{"text before a fence stays outside it", "intro\n\n```\ncode\n```", 14, []string{"intro\n\n", "```\ncode\n```"}},
		{"no empty code block before a cut", "text\n```go\nfmt.Println()\n```", 24, []string{"text\n", "```go\nfmt.Println()\n```"}},
		{"fences not repaired below 12 bytes", "```\ncode\n```", 8, []string{"```\n```", "code\n```"}},
		{"no empty code block at a chunk start", "```go\nfmt.Println()\n```", 16, []string{"```go\nfmt.Pr\n```", "```go\nintln(\n```", "```go\n)\n```"}},
		{"unclosed fence in the input is closed", "```sh\nrm x", 40, []string{"```sh\nrm x\n```"}},
		{"four-backtick fence keeps its marker", "````\n```\nin\n````", 14, []string{"````\n```\n````", "````\nin\n````"}},
		{"info string dropped when it cannot fit", "```" + strings.Repeat("x", 20) + "\nabc\ndef\n```", 30, []string{"```" + strings.Repeat("x", 20) + "\nab\n```", "```\nc\ndef\n```"}},
		// Tokens kept whole, the regression of what adapters/slack FuzzChunks found: a reply of links
		// with no space or line break between them was cut inside a <https://...|label> token, so one
		// message ended in "<http" and the next began with "s://...>". FuzzSplit then found that a
		// token at the very start of a one-byte window made an empty chunk, and Split never ended
		// (testdata/fuzz/FuzzSplit/f2bff557c965da3d).
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
			if strings.Join(got, "|") != strings.Join(tt.want, "|") || len(got) != len(tt.want) {
				t.Fatalf("Split(%q, %d) =\n%q\nwant\n%q", tt.in, tt.limit, got, tt.want)
			}
			checkSplit(t, tt.in, tt.limit)
		})
	}
}

func TestSplitPropertiesOnLongMarkdown(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	for i := range 40 {
		b.WriteString("Step output paragraph with ünïcödé and emoji 🚀 number ")
		b.WriteString(strings.Repeat("x", i))
		b.WriteString("\n\n```bash\n")
		for j := range i % 7 {
			b.WriteString(strings.Repeat("echo line ", j+1) + "\n")
		}
		b.WriteString("```\n\n")
	}
	for _, limit := range []int{12, 16, 40, 100, 3000, 4000} {
		checkSplit(t, b.String(), limit)
	}
}

func FuzzSplit(f *testing.F) {
	f.Add("```go\nfunc main() {}\n```\n\ntext", 12)
	f.Add("a\n\nb\nc", 2)
	f.Add("é👍\xff\x80x", 3)
	f.Add("````\n```\n`````\n", 10)
	f.Add("   ```x\r\ny\r\n```\r\n", 11)
	f.Fuzz(func(t *testing.T, s string, limit int) {
		checkSplit(t, s, limit%300)
	})
}

// checkSplit asserts what a reader of the chunks sees: nothing lost or added but fence lines, no
// chunk over the limit, no broken rune, and each chunk's code fences balanced.
func checkSplit(t *testing.T, s string, limit int) {
	t.Helper()
	chunks := Split(s, limit)
	pieces := split(s, limit)
	var joined strings.Builder
	for i, p := range pieces {
		if chunks[i] != p.open+p.body+p.close {
			t.Fatalf("chunk %d = %q, not open+body+close of %#v", i, chunks[i], p)
		}
		if (p.open != "" && !openerLine.MatchString(strings.TrimSuffix(p.open, "\n"))) || (p.close != "" && !closerLine.MatchString(strings.TrimPrefix(p.close, "\n"))) {
			t.Fatalf("chunk %d adds %q and %q, which are not fence lines", i, p.open, p.close)
		}
		joined.WriteString(p.body)
	}
	if joined.String() != s {
		t.Fatalf("chunks without their fence lines join to %q, want %q", joined.String(), s)
	}
	if limit <= 0 {
		return
	}
	for i, c := range chunks {
		if len(c) > limit && utf8.RuneCountInString(pieces[i].body) > 1 {
			t.Fatalf("chunk %d is %d bytes, over the limit %d: %q", i, len(c), limit, c)
		}
		if utf8.ValidString(s) && !utf8.ValidString(c) {
			t.Fatalf("chunk %d splits a rune: %q", i, c)
		}
		if limit >= 2*longestBacktickRun(s)+6 && !fencesBalanced(c) {
			t.Fatalf("chunk %d leaves a code fence open: %q", i, c)
		}
	}
}

// The fence grammar restated independently of split.go (CommonMark backtick fences).
var (
	openerLine = regexp.MustCompile("^ {0,3}(`{3,})[^`]*$")
	closerLine = regexp.MustCompile("^ {0,3}(`{3,})[ \t\r]*$")
)

func fencesBalanced(chunk string) bool {
	open := ""
	for _, line := range strings.Split(chunk, "\n") {
		if open == "" {
			if m := openerLine.FindStringSubmatch(line); m != nil {
				open = m[1]
			}
		} else if m := closerLine.FindStringSubmatch(line); m != nil && len(m[1]) >= len(open) {
			open = ""
		}
	}
	return open == ""
}

func longestBacktickRun(s string) int {
	longest, run := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return longest
}

func TestPreview(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"exactly5", 8, "exactly5"},
		{"line one\n\nline  two\r\n", 100, "line one line two"},
		{"abcdef", 3, "abc…"},
		{"ééééé", 2, "éé…"},
		{"👍👍👍", 1, "👍…"},
		{"", 0, ""},
		{"x", 0, "…"},
		{"x", -1, "…"},
	}
	for _, tt := range tests {
		if got := Preview(tt.in, tt.n); got != tt.want {
			t.Errorf("Preview(%q, %d) = %q, want %q", tt.in, tt.n, got, tt.want)
		}
	}
}
