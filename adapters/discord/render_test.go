package discord

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

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
		{"plain and strong", c(conversation.P("Run "), conversation.B("done")), "Run **done**"},
		{"code", c(conversation.C("/workflow resume 7k")), "`/workflow resume 7k`"},
		{"code with backtick", c(conversation.C("a`b")), "`` a`b ``"},
		{"code with double backtick", c(conversation.C("a``b")), "`aˋˋb`"},
		{"code cannot ping", c(conversation.C("run x @everyone <@1>")), "`run x @" + zwsp + "everyone <" + zwsp + "@1>`"},
		{"block on its own line", c(conversation.P("out:"), conversation.Block("x\n"), conversation.P("end")), "out:\n```\nx\n```\nend"},
		{"fence inside block", c(conversation.Block("a\n```\nb")), "```\na\n`\u200b``\nb\n```"},
		{"user markup escaped", c(conversation.U("**bold** _x_ `c` > q # h [l](u) \\")), `\*\*bold\*\* \_x\_ \` + "`c\\`" + ` \> q \# h \[l\]\(u\) \\`},
		{"user mentions broken", c(conversation.U("<@1> <@!2> <@&3> <#4> @everyone @HERE")), `<` + zwsp + `@1\> <` + zwsp + `@!2\> <` + zwsp + `@&3\> <\#4\> @` + zwsp + `everyone @` + zwsp + `HERE`},
		{"output keeps markdown", c(conversation.O("**ok** <@1> @here")), "**ok** <\u200b@1> @\u200bhere"},
		{"masked link shows its url", c(conversation.O("[click](https://evil.example)")), "click (<https://evil.example>)"},
		{"masked link in angle brackets", c(conversation.O("[click](<https://evil.example/a_b>)")), "click (<https://evil.example/a_b>)"},
		{"masked link with a title", c(conversation.O(`[click](https://evil.example 'Docs')`)), "click (<https://evil.example>)"},
		{"masked link with parentheses", c(conversation.O("[Go](https://en.wikipedia.org/wiki/Go_(language))")),
			"Go (<https://en.wikipedia.org/wiki/Go_(language)>)"},
		{"label that is the url", c(conversation.O("[https://e.com](https://e.com)")), "<https://e.com>"},
		{"label that looks like another url", c(conversation.O("[https://good.example](https://evil.example)")),
			"<https://good.example> (<https://evil.example>)"},
		{"label with a spoiler", c(conversation.O("[||x||](https://e.com)")), `\|\|x\|\| (<https://e.com>)`},
		{"link that is not http stays text", c(conversation.O("[x](javascript:alert(1))")), `\[x\](javascript:alert(1))`},
		{"nested brackets cannot make a link", c(conversation.O("[a[b]c](https://evil.example)")),
			`\[a\[b\]c\](<https://evil.example>)`},
		{"escaped masked link", c(conversation.O(`\[x\](https://evil.example)`)), `\\x\\ (<https://evil.example>)`},
		{"autolink", c(conversation.O("at <https://evil.example> now")), "at <https://evil.example> now"},
		{"bare url kept whole", c(conversation.O("see https://e.com/a_b*c~d.")), "see <https://e.com/a_b*c~d>."},
		{"emphasis closed on its line kept", c(conversation.O("**b** __c__ ~~d~~ **<https://e.com>**")),
			"**b** **c** ~~d~~ **<https://e.com>**"},
		{"other emphasis escaped", c(conversation.O("*i* _j_ a ** b ~~ c 2*3")), `\*i\* \_j\_ a \*\* b \~\~ c 2\*3`},
		{"backslash escaped only where Discord reads an escape", c(conversation.O(`C:\Work\Repo\ \* \`)), `C:\Work\Repo\ \\\* \\`},
		{"spoiler escaped", c(conversation.O("||secret||")), `\|\|secret\|\|`},
		{"heading keeps no bold of its own", c(conversation.O("## **Summary**\n# <@1>")), "**Summary**\n**<\u200b@1>**"},
		{"quotes escaped", c(conversation.O("> q\n  >>> all after")), "\\> q\n  \\>>> all after"},
		{"mentions in output", c(conversation.O("<@123> <@!1> <@&2> <#3> @everyone @here")),
			"<\u200b@123> <\u200b@!1> <\u200b@&2> <\u200b#3> @\u200beveryone @\u200bhere"},
		{"inline code kept", c(conversation.O("run `a **b** [x](y) <@1>` ok")), "run `a **b** [x](y) <\u200b@1>` ok"},
		{"stray backtick escaped", c(conversation.O("a ` b")), "a \\` b"},
		{"stray fence shown as typed", c(conversation.O("a ```b")), "a \\`\\`\\`b"},
		{"double backticks escaped", c(conversation.O("``a`b``")), "\\`\\`a\\`b\\`\\`"},
		{"fenced block kept with its language", c(conversation.O("```go\nx := `a`\n```\n**after**")),
			"```go\nx := `a`\n```\n**after**"},
		{"unknown info string dropped", c(conversation.O("```my lang\nx\n```")), "```\nx\n```"},
		{"unclosed fence closed", c(conversation.O("```\ncode")), "```\ncode\n```"},
		{"nested fences", c(conversation.O("````\n```\ninner\n```\n````\nafter")),
			"```\n`\u200b``\ninner\n`\u200b``\n```\nafter"},
		{"fence with backticks after it is not a fence", c(conversation.O("```go x```")), "\\`\\`\\`go x\\`\\`\\`"},
		{"empty block dropped", c(conversation.O("a\n```\n```\nb")), "a\nb"},
		{"output starting mid-line opens its block on a new line", c(conversation.P("failed: "), conversation.O("```\nboom"), conversation.P("\nNext")),
			"failed: \n```\nboom\n```\nNext"},
		{"text after an output block starts a new line", c(conversation.O("```\nx\n```"), conversation.P(" after")), "```\nx\n```\n after"},
		{"fence of four backticks in a code block", c(conversation.Block("a\n````\nb")), "```\na\n`\u200b`\u200b``\nb\n```"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Render(tt.in); got != tt.want {
				t.Errorf("Render = %q, want %q", got, tt.want)
			}
		})
	}
}

// liveMention reports a mention Discord would still parse in s.
func liveMention(s string) string {
	lower := strings.ToLower(s)
	for _, m := range []string{"@everyone", "@here", "<@", "<#"} {
		if strings.Contains(lower, m) {
			return m
		}
	}
	return ""
}

// FuzzRender checks the property that keeps untrusted text harmless: whatever a user or a workflow
// writes, Discord reads the rendered content with no live mention, no masked link (whose label
// would hide its URL), no spoiler, every ``` on a fence line of its own, and no code block or
// span running past the span into the bot's text after it.
func FuzzRender(f *testing.F) {
	for _, s := range []string{"@everyone", "<@123>", "<@&1><#2>", "@@here", "<<@@everyone", "\\<@1>", "@Everyone", "`@here`",
		"[click](https://evil.example)", "[x](<https://a.b/c>)", "[a[b]c](https://e.com)", "||x||", "a ```b", "```\n```",
		"````\n```\n````", "`a``b`", "```go\nx\n", "> q\n>>> all", "\\[x\\](https://e.com)", "https://e.com/](x)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, sp := range []conversation.Span{conversation.U(s), conversation.O(s), conversation.Block(s)} {
			out := Render(conversation.T(conversation.P("x"), sp, conversation.P("y")))
			// A code block is bot-authored, and Discord reads no mention in one.
			if m := liveMention(out[1 : len(out)-1]); m != "" && sp.Kind != conversation.CodeBlock {
				t.Errorf("Render(%v %q) = %q keeps a live %s", sp.Kind, s, out, m)
			}
			if problem := readAsDiscord(out); problem != "" {
				t.Errorf("Render(%v %q) = %q: %s", sp.Kind, s, out, problem)
			}
		}
	})
}

// Discord's own rules, as its client parses a message (simple-markdown's, with Discord's changes),
// reduced to what lets text escape its place: code blocks, which Discord reads wherever ``` is;
// inline code; autolinks; masked links; spoilers; and backslash escapes.
var (
	discordCodeBlock = regexp.MustCompile("^```(?:[a-z0-9_+\\-.#]+?\n)?\n*[^\n][\\s\\S]*?\n*```")
	discordEscape    = regexp.MustCompile(`^\\[^0-9A-Za-z\s]`)
	discordAutolink  = regexp.MustCompile(`^<[^: >]+:\/[^ >]+>`)
	discordMasked    = regexp.MustCompile(`^\[(?:[^\[\]]|\[[^\]]*\])*\]\(`)
)

// readAsDiscord reads out as Discord would and says what it found wrong, or "".
func readAsDiscord(out string) string {
	for line := range strings.SplitSeq(out, "\n") {
		if strings.Contains(line, "```") && (!strings.HasPrefix(line, "```") || strings.Count(line, "`") != 3) {
			return fmt.Sprintf("the fence in line %q is not a line of its own", line)
		}
	}
	for i := 0; i < len(out); {
		rest := out[i:]
		var n int
		switch {
		case discordEscape.MatchString(rest):
			n = len(discordEscape.FindString(rest))
		case strings.HasPrefix(rest, "```") && discordCodeBlock.MatchString(rest):
			n = len(discordCodeBlock.FindString(rest))
		case rest[0] == '`':
			n = inlineCodeLen(rest)
		case rest[0] == '<' && discordAutolink.MatchString(rest):
			n = len(discordAutolink.FindString(rest))
		case discordMasked.MatchString(rest):
			return fmt.Sprintf("a masked link at %d", i)
		case strings.HasPrefix(rest, "||"):
			return fmt.Sprintf("a spoiler at %d", i)
		default:
			n = 1
		}
		if i+n == len(out) && n > 1 {
			return "the text after the span is inside code"
		}
		i += n
	}
	return ""
}

// inlineCodeLen is the length of the inline code span that starts rest (a run of backticks closed
// by a run of the same length), or 1 when it opens none.
func inlineCodeLen(rest string) int {
	open := len(rest) - len(strings.TrimLeft(rest, "`"))
	for i := open; i < len(rest); {
		j := strings.IndexByte(rest[i:], '`')
		if j < 0 {
			break
		}
		run := len(rest[i+j:]) - len(strings.TrimLeft(rest[i+j:], "`"))
		if run == open && rest[i+j-1] != '`' {
			return i + j + run
		}
		i += j + run
	}
	return 1
}

func TestNewRejectsBadConfig(t *testing.T) {
	t.Parallel()
	ok := Config{BotToken: "t", AppID: "123"}
	tests := []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"no token", func(c *Config) { c.BotToken = "" }, "DISCORD_BOT_TOKEN"},
		{"app id not a snowflake", func(c *Config) { c.AppID = "my-app" }, "DISCORD_APP_ID"},
		{"guild id not a snowflake", func(c *Config) { c.GuildIDs = []string{"12", "x"} }, `DISCORD_GUILD_IDS entry "x"`},
		{"api url not http", func(c *Config) { c.APIURL = "ftp://x" }, "DISCORD_API_URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := ok
			tt.edit(&cfg)
			_, err := New(cfg, &recorder{}, &stubAC{}, newClaimer())
			if !errors.Is(err, ErrConfig) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New = %v, want ErrConfig naming %s", err, tt.want)
			}
		})
	}
	if _, err := New(ok, &recorder{}, &stubAC{}, newClaimer()); err != nil {
		t.Errorf("New with a valid config: %v", err)
	}
}

// A display name is the person's own text: rendered where a run message names them, it keeps no live
// mention, starts no new line and opens no markup; the thread name it becomes part of stays one line
// within Discord's limit.
func FuzzRenderPerson(f *testing.F) {
	for _, s := range []string{"Ann", "@everyone", "<@123>\n# big", "**bold** _it_ `code`", "\u202e@here", "a\u2028<#9>"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		p := conversation.Person{ID: "discord:4567", Name: name}
		out := Render(conversation.T(conversation.P("x"), p.Span(), conversation.P("y")))
		inner := out[1 : len(out)-1]
		if m := liveMention(inner); m != "" {
			t.Errorf("name %q rendered as %q keeps a live %s", name, out, m)
		}
		if strings.ContainsAny(inner, "\r\n") {
			t.Errorf("name %q rendered as %q starts a new line", name, out)
		}
		for _, c := range []string{"*", "_", "`", "~", "|", ">", "#", "[", "]"} {
			if strings.Count(inner, c) != strings.Count(inner, `\`+c) {
				t.Errorf("name %q rendered as %q leaves %s unescaped", name, out, c)
			}
		}
		root := conversation.T(conversation.P("▶ "), conversation.C("wf"), conversation.P(" - run "), conversation.C("7k2m9x4q1c"), conversation.P(" by "), p.Span())
		if th := threadName(root); strings.ContainsAny(th, "\r\n") || utf8.RuneCountInString(th) > 100 {
			t.Errorf("name %q gives the thread name %q", name, th)
		}
	})
}
