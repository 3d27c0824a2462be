package discord

import (
	"errors"
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

func FuzzRender(f *testing.F) {
	for _, s := range []string{"@everyone", "<@123>", "<@&1><#2>", "@@here", "<<@@everyone", "\\<@1>", "@Everyone", "`@here`"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, sp := range []conversation.Span{conversation.U(s), conversation.O(s)} {
			out := Render(conversation.T(conversation.P("x"), sp, conversation.P("y")))
			if m := liveMention(out[1 : len(out)-1]); m != "" {
				t.Errorf("Render(%v %q) = %q keeps a live %s", sp.Kind, s, out, m)
			}
		}
	})
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
