package discord

import (
	"strings"
	"testing"
	"unicode/utf8"

	"threadflow/conversation"
)

// discordLimit is Discord's limit on a message's content, in characters.
const discordLimit = 2000

// FuzzChunks checks what a Discord reader of a long reply sees: at least one message (buttons
// need one to sit on), each within Discord's limit, none with a live mention, and the messages
// read back as the whole rendered reply. s is repeated n times so inputs reach the sizes where
// splitting happens.
func FuzzChunks(f *testing.F) {
	for _, s := range []string{"@everyone word ", "line\n", "```go\nx := <@1>\n```\n", "<@&1><#2> ", "é👍 ", "", "\\<@1>\n\n"} {
		f.Add(s, uint16(300), false)
		f.Add(s, uint16(1900), true)
	}
	a := &Adapter{}
	f.Fuzz(func(t *testing.T, s string, n uint16, ephemeral bool) {
		text := repeatUpTo(s, int(n)%4000, 8000)
		for _, sp := range []conversation.Span{conversation.U(text), conversation.O(text)} {
			r := conversation.Reply{Text: conversation.T(sp), Ephemeral: ephemeral, ToUser: "discord:1234567890123"}
			chunks := a.chunks(r)
			if len(chunks) == 0 {
				t.Fatal("no chunk: buttons would have no message")
			}
			for i, c := range chunks {
				if utf8.RuneCountInString(c) > discordLimit {
					t.Fatalf("chunk %d of %d is %d characters, over %d", i, len(chunks), utf8.RuneCountInString(c), discordLimit)
				}
				body := c
				if i == 0 && ephemeral {
					body = strings.TrimPrefix(c, "<@1234567890123> ") // the one mention the bot itself adds
				}
				if m := liveMention(body); m != "" {
					t.Fatalf("chunk %d keeps a live %s: %q", i, m, c)
				}
			}
			joined := strings.Join(chunks, "")
			want := Render(r.Text)
			if ephemeral {
				want = "<@1234567890123> " + want
			}
			if !strings.Contains(want, "```") && joined != want {
				t.Fatalf("chunks do not join back to the rendered reply:\n%q\nwant\n%q", joined, want)
			}
		}
	})
}

// repeatUpTo repeats s n times, but to no more than limit bytes: big enough to be split, small
// enough to keep the fuzzer fast.
func repeatUpTo(s string, n, limit int) string {
	if len(s) > 0 {
		n = min(n, limit/len(s)+1)
	}
	return strings.Repeat(s, n)
}
