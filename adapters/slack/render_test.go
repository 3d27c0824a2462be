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
		{"output link shows its url", c(conversation.O("see [the docs](https://example.com/a?b=1&c=2) now")),
			"see the docs (<https://example.com/a?b=1&amp;c=2>) now"},
		{"output unsafe link kept as text", c(conversation.O("[x](javascript:alert(1))")), "[x](javascript:alert(1))"},
		{"output link with mention in url", c(conversation.O("[x](https://e.com/<!channel>)")),
			"[x](https://e.com/&lt;!channel&gt;)"},
		{"output link label escaped", c(conversation.O("[<!here>](https://e.com)")), "&lt;!here&gt; (<https://e.com>)"},
		{"output heading", c(conversation.O("## Summary ##\ntext")), "*Summary*\ntext"},
		{"output mention escaped", c(conversation.O("ping <@U999> <!channel>")), "ping &lt;@U999&gt; &lt;!channel&gt;"},
		{"output fence kept, content escaped", c(conversation.O("```go\nif a < b && **c** {}\n```\n**after**")),
			"```\nif a &lt; b &amp;&amp; **c** {}\n```\n*after*"},
		{"output mid-line fence broken", c(conversation.O("a ```b")), "a `\u200b`\u200b`b"},
		{"output unclosed fence closed", c(conversation.O("```\ncode")), "```\ncode\n```"},
		{"output inline code untouched", c(conversation.O("run `a **b** <c>` ok")), "run `a **b** &lt;c&gt;` ok"},
		{"masked link shows its url", c(conversation.O("[click](https://evil.example)")), "click (<https://evil.example>)"},
		{"masked link in angle brackets", c(conversation.O("[click](<https://evil.example/a>)")), "click (<https://evil.example/a>)"},
		{"masked link with a title", c(conversation.O(`[click](https://evil.example "Docs")`)), "click (<https://evil.example>)"},
		{"masked link with parentheses", c(conversation.O("[Go](https://en.wikipedia.org/wiki/Go_(language))")),
			"Go (<https://en.wikipedia.org/wiki/Go_(language)>)"},
		{"label that is the url", c(conversation.O("[https://e.com](https://e.com)")), "<https://e.com>"},
		{"label that looks like another url", c(conversation.O("[https://good.example](https://evil.example)")),
			"https://good.example (<https://evil.example>)"},
		{"empty label", c(conversation.O("[](https://e.com)")), "<https://e.com>"},
		{"autolink", c(conversation.O("at <https://evil.example> now")), "at <https://evil.example> now"},
		{"slack link syntax shown as typed", c(conversation.O("<https://evil.example|click>")), "&lt;https://evil.example|click&gt;"},
		{"slack link syntax in a label", c(conversation.O("[<https://evil.example|x>](https://e.com)")),
			"&lt;https://evil.example|x&gt; (<https://e.com>)"},
		{"autolink of another scheme", c(conversation.O("<mailto:a@b.c>")), "&lt;mailto:a@b.c&gt;"},
		{"mentions in output", c(conversation.O("<@U123> @everyone <!channel> <!subteam^S1>")),
			"&lt;@U123&gt; @everyone &lt;!channel&gt; &lt;!subteam^S1&gt;"},
		{"heading keeps no bold of its own", c(conversation.O("## **Summary**")), "*Summary*"},
		{"quote of the rest of the message broken", c(conversation.O("ok\n>>> all after")), "ok\n\u200b&gt;&gt;&gt; all after"},
		{"one-line quote kept", c(conversation.O("> note")), "&gt; note"},
		{"nested fences", c(conversation.O("````\n```\ninner\n```\n````\nafter")),
			"```\n`\u200b`\u200b`\ninner\n`\u200b`\u200b`\n```\nafter"},
		{"fence with backticks after it is not a fence", c(conversation.O("```go x```")), "`\u200b`\u200b`go x`\u200b`\u200b`"},
		{"empty block dropped", c(conversation.O("a\n```\n```\nb")), "a\nb"},
		{"output starting mid-line opens its block on a new line", c(conversation.P("failed: "), conversation.O("```\nboom"), conversation.P("\nNext")),
			"failed: \n```\nboom\n```\nNext"},
		{"text after an output block starts a new line", c(conversation.O("```\nx\n```"), conversation.P(" after")), "```\nx\n```\n after"},
		{"fence of four backticks in a code block", c(conversation.Block("a\n````\nb")), "```\na\n`\u200b`\u200b`\u200b`\nb\n```"},
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
// an http(s) link that shows its URL (no <url|label>), and every code fence is a line of its own,
// balanced within the span, so the bot's text after it is never inside a block.
func FuzzRender(f *testing.F) {
	for _, s := range []string{"<!channel>", "<@U999>", "[x](https://a.b/<@U1>)", "```\n<!here>", "&lt;!here&gt;",
		"[<!here>](http://x)", "## <@U1>", "`<!channel>`", "**<@U1>**", "<<!channel>>", "[a](https://x|<!here>)",
		"[click](https://evil.example)", "[x](<https://a.b/c>)", "<https://evil.example|click>", "a ```b\n```",
		"````\n```\n````", "```\n```", "x\n>>> y"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, sp := range []conversation.Span{conversation.U(s), conversation.O(s), conversation.Block(s)} {
			out := Render(conversation.T(conversation.P("x "), sp, conversation.P(" y")))
			assertNoLiveTokens(t, out)
			assertFencesBalanced(t, out)
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
		if token, _, _ := strings.Cut(out[i:], ">"); strings.Contains(token, "|") {
			t.Fatalf("rendered text has a link whose label hides its URL at %d: %q", i, out)
		}
	}
}

// assertFencesBalanced checks that every ``` is a fence line of its own and that they pair up.
func assertFencesBalanced(t *testing.T, out string) {
	t.Helper()
	if n := strings.Count(out, "```"); n != fenceLines(out) {
		t.Fatalf("%d fences in %q, %d of them lines of their own", n, out, fenceLines(out))
	}
	if fenceLines(out)%2 != 0 {
		t.Fatalf("unbalanced fences in %q", out)
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
		if l == "```" {
			n++
		}
	}
	return n
}
