package slack

import (
	"strings"
	"testing"

	"threadflow/conversation"
)

func TestRender(t *testing.T) {
	t.Parallel()
	c := conversation.T
	tests := []struct {
		name string
		in   conversation.Text
		want string
	}{
		{"plain as is", c(conversation.P("Run *started* <https://x|x>")), "Run *started* <https://x|x>"},
		{"strong", c(conversation.P("state: "), conversation.B("paused")), "state: *paused*"},
		{"code escaped", c(conversation.C("a<b>`c`&")), "`a&lt;b&gt;ˋcˋ&amp;`"},
		{"code block on own lines", c(conversation.P("log:"), conversation.Block("x < y\n```\nz"), conversation.P("done")),
			"log:\n```\nx &lt; y\n`\u200b`\u200b`\nz\n```\ndone"},
		{"user text mentions escaped", c(conversation.U("hi <!channel> <@U999> <!here> & <#C1>")),
			"hi &lt;!channel&gt; &lt;@U999&gt; &lt;!here&gt; &amp; &lt;#C1&gt;"},
		{"user text fence broken", c(conversation.U("```boom")), "`\u200b`\u200b`boom"},
		{"user text entity not decoded", c(conversation.U("&lt;!channel&gt;")), "&amp;lt;!channel&amp;gt;"},
		{"output bold", c(conversation.O("a **b** and __c__ ~~d~~")), "a *b* and *c* ~d~"},
		{"output link", c(conversation.O("see [the docs](https://example.com/a?b=1&c=2) now")),
			"see <https://example.com/a?b=1&amp;c=2|the docs> now"},
		{"output unsafe link kept as text", c(conversation.O("[x](javascript:alert(1))")), "[x](javascript:alert(1))"},
		{"output link with mention in url", c(conversation.O("[x](https://e.com/<!channel>)")),
			"[x](https://e.com/&lt;!channel&gt;)"},
		{"output link label escaped", c(conversation.O("[<!here>](https://e.com)")), "<https://e.com|&lt;!here&gt;>"},
		{"output heading", c(conversation.O("## Summary ##\ntext")), "*Summary*\ntext"},
		{"output mention escaped", c(conversation.O("ping <@U999> <!channel>")), "ping &lt;@U999&gt; &lt;!channel&gt;"},
		{"output fence kept, content escaped", c(conversation.O("```go\nif a < b && **c** {}\n```\n**after**")),
			"```\nif a &lt; b &amp;&amp; **c** {}\n```\n*after*"},
		{"output mid-line fence broken", c(conversation.O("a ```b")), "a `\u200b`\u200b`b"},
		{"output unclosed fence closed", c(conversation.O("```\ncode")), "```\ncode\n```"},
		{"output inline code untouched", c(conversation.O("run `a **b** <c>` ok")), "run `a **b** &lt;c&gt;` ok"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Render(tt.in); got != tt.want {
				t.Errorf("Render() =\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

// FuzzRender checks the property that keeps untrusted text harmless: whatever a user or a workflow
// writes, the rendered mrkdwn holds no live mention, channel ping or special token, every "<" opens
// an http(s) link, and Output's fences stay balanced.
func FuzzRender(f *testing.F) {
	for _, s := range []string{"<!channel>", "<@U999>", "[x](https://a.b/<@U1>)", "```\n<!here>", "&lt;!here&gt;",
		"[<!here>](http://x)", "## <@U1>", "`<!channel>`", "**<@U1>**", "<<!channel>>", "[a](https://x|<!here>)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, sp := range []conversation.Span{conversation.U(s), conversation.O(s)} {
			out := Render(conversation.T(conversation.P("x "), sp, conversation.P(" y")))
			assertNoLiveTokens(t, out)
			if sp.Kind == conversation.Output && fenceLines(out)%2 != 0 {
				t.Fatalf("unbalanced fences in %q -> %q", s, out)
			}
		}
	})
}

func assertNoLiveTokens(t *testing.T, out string) {
	t.Helper()
	for _, bad := range []string{"<!", "<@", "<#"} {
		if strings.Contains(out, bad) {
			t.Fatalf("rendered text contains live %q: %q", bad, out)
		}
	}
	for i := strings.IndexByte(out, '<'); i >= 0; i = indexFrom(out, '<', i+1) {
		if !strings.HasPrefix(out[i:], "<http://") && !strings.HasPrefix(out[i:], "<https://") {
			t.Fatalf("rendered text has a non-link token at %d: %q", i, out)
		}
	}
}

func indexFrom(s string, c byte, from int) int {
	j := strings.IndexByte(s[from:], c)
	if j < 0 {
		return -1
	}
	return from + j
}

func fenceLines(s string) int {
	n := 0
	for _, l := range strings.Split(s, "\n") {
		if strings.HasPrefix(l, "```") {
			n++
		}
	}
	return n
}
