package slack

import (
	"strings"
	"testing"

	"threadflow/conversation"
)

// FuzzChunks checks what a Slack reader of a long reply sees: every message is within Slack's
// limits (the one holding buttons within a section block's), holds no live mention, and the
// messages read back as the whole rendered reply. s is repeated n times so inputs reach the
// multi-kilobyte sizes where splitting happens.
func FuzzChunks(f *testing.F) {
	for _, s := range []string{"<!channel> word ", "line\n", "```go\nx := <-ch\n```\n", "&lt;@U1&gt;\n\n", "é👍 ", "[a](https://x.y/<!here>) "} {
		f.Add(s, uint16(900), false)
		f.Add(s, uint16(4000), true)
	}
	f.Fuzz(func(t *testing.T, s string, n uint16, buttons bool) {
		text := repeatUpTo(s, int(n)%5000, 12000)
		for _, sp := range []conversation.Span{conversation.U(text), conversation.O(text)} {
			r := conversation.Reply{Text: conversation.T(sp)}
			if buttons {
				r.Buttons = []conversation.Button{{Label: "Approve", Command: "/workflow approve 7k2m9x4q1c"}}
			}
			checkChunks(t, r)
			checkSingle(t, r)
		}
	})
}

func checkChunks(t *testing.T, r conversation.Reply) {
	t.Helper()
	chunks, err := chunksFor(r)
	rendered := Render(r.Text)
	if err != nil {
		if strings.TrimSpace(rendered) != "" || len(r.Buttons) > 0 {
			t.Fatalf("chunksFor(%q) failed: %v", rendered, err)
		}
		return
	}
	for i, c := range chunks {
		limit := chunkLimit
		if i == len(chunks)-1 && len(r.Buttons) > 0 {
			limit = sectionLimit
		}
		if len(c) > limit {
			t.Fatalf("chunk %d of %d is %d bytes, over %d", i, len(chunks), len(c), limit)
		}
		assertNoLiveTokens(t, c)
	}
	// Split adds fence lines only to close and reopen a code block it cuts; without fences the
	// messages are the rendered text, cut and nothing else. Blank text with buttons is sent as one
	// empty message under them.
	blank := strings.TrimSpace(rendered) == ""
	if blank && (len(chunks) != 1 || chunks[0] != "") {
		t.Fatalf("blank reply with buttons sent as %q, want one empty message", chunks)
	}
	if !blank && !strings.Contains(rendered, "```") && strings.Join(chunks, "") != rendered {
		t.Fatalf("chunks do not join back to the rendered reply:\n%q\nwant\n%q", strings.Join(chunks, ""), rendered)
	}
}

// checkSingle checks the edit path: one message, cut with a visible mark when too long.
func checkSingle(t *testing.T, r conversation.Reply) {
	t.Helper()
	msg, err := singleMessage(r)
	if err != nil {
		return // an empty reply without buttons; chunksFor is checked for the same case
	}
	limit := chunkLimit
	if len(r.Buttons) > 0 {
		limit = sectionLimit
	}
	rendered := Render(r.Text)
	switch {
	case len(msg) > limit:
		t.Fatalf("single message is %d bytes, over %d", len(msg), limit)
	case len(rendered) <= limit && msg != rendered:
		t.Fatalf("a short reply was changed: %q -> %q", rendered, msg)
	case len(rendered) > limit && !strings.HasSuffix(msg, truncatedMark):
		t.Fatalf("a cut reply does not say so: %q", msg[max(0, len(msg)-40):])
	}
	assertNoLiveTokens(t, msg)
}

// repeatUpTo repeats s n times, but to no more than limit bytes: big enough to be split, small
// enough to keep the fuzzer fast.
func repeatUpTo(s string, n, limit int) string {
	if len(s) > 0 {
		n = min(n, limit/len(s)+1)
	}
	return strings.Repeat(s, n)
}
