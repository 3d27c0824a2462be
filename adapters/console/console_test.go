package console

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/iotest"

	"threadflow/conversation"
)

var channel = conversation.Address{Platform: Platform, ChannelID: "term"}

func TestRender(t *testing.T) {
	t.Parallel()
	c := conversation.T
	tests := []struct {
		name string
		text conversation.Text
		want string
	}{
		{"plain and strong as is", c(conversation.P("Run "), conversation.B("failed"), conversation.P(".")), "Run failed."},
		{"code in backticks", c(conversation.P("id "), conversation.C("7k2m9x")), "id `7k2m9x`"},
		{"block fenced on its own lines", c(conversation.P("log:"), conversation.Block("a\nb"), conversation.P("done")), "log:\n```\na\nb\n```\ndone"},
		{"block ending in newline", c(conversation.Block("x\n")), "```\nx\n```"},
		{"user text verbatim", c(conversation.U("*not bold* <@U1> `x`")), "*not bold* <@U1> `x`"},
		{"escape sequences removed", c(conversation.U("a\x1b[2Jb\x1b]0;title\x07c")), "a[2Jb]0;titlec"},
		{"other controls removed, newline and tab kept", c(conversation.O("x\r\x08\x00y\n\tz\x7f")), "xy\n\tz"},
		{"C1 CSI removed", c(conversation.O("a\u009b31mb")), "a31mb"},
		{"invalid bytes cannot smuggle a CSI", c(conversation.O("a\x9b31mb")), "a\uFFFD31mb"},
		{"controls removed from code too", c(conversation.C("/workflow run x \"\x1b[31m\"")), "`/workflow run x \"[31m\"`"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Render(tt.text); got != tt.want {
				t.Fatalf("Render = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestCopyToTerminal: output streamed to a terminal loses what Render removes, wherever a read
// ends, a character cut in two included.
func TestCopyToTerminal(t *testing.T) {
	t.Parallel()
	in := "ok \x1b]52;c;cGF3bmVk\x07\x1b[2J\r\n\tx\u009b31m é\xff end\n"
	var out bytes.Buffer
	if err := CopyToTerminal(&out, iotest.OneByteReader(strings.NewReader(in))); err != nil {
		t.Fatal(err)
	}
	if want := "ok ]52;c;cGF3bmVk[2J\n\tx31m é\uFFFD end\n"; out.String() != want {
		t.Fatalf("CopyToTerminal = %q, want %q", out.String(), want)
	}
}

// checkPrinted fails the test unless the terminal shows exactly want.
func checkPrinted(t *testing.T, out *bytes.Buffer, want string) {
	t.Helper()
	if out.String() != want {
		t.Fatalf("printed\n%s\nwant\n%s", out.String(), want)
	}
}

func TestPostPrintsReplyAndButtons(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	o := NewOutbox(&out)
	ctx := context.Background()
	r := conversation.Reply{
		Text: conversation.T(conversation.P("Run "), conversation.C("7k2m9x4q1c"), conversation.P(" waits for approval")),
		Buttons: []conversation.Button{
			{Label: "Approve", Command: "/workflow approve 7k2m9x4q1c", Style: conversation.StylePrimary},
			{Label: "Reject", Command: "/workflow reject 7k2m9x4q1c", Style: conversation.StyleDanger},
		},
	}
	ref1, err := o.Post(ctx, channel, conversation.Reply{Text: conversation.T(conversation.P("hello"))})
	if err != nil {
		t.Fatal(err)
	}
	thread := channel
	thread.ThreadID = "1"
	ref2, err := o.Post(ctx, thread, r)
	if err != nil {
		t.Fatal(err)
	}
	want := "hello\n" +
		"[thread 1] Run `7k2m9x4q1c` waits for approval\n" +
		"  [Approve] /workflow approve 7k2m9x4q1c\n" +
		"  [Reject] /workflow reject 7k2m9x4q1c\n"
	checkPrinted(t, &out, want)
	if ref1.MessageID != "1" || ref2.MessageID != "2" || ref2.Address != thread {
		t.Fatalf("refs = %+v, %+v; want sequential ids 1, 2 at the addresses posted to", ref1, ref2)
	}
}

func TestStartThreadStaysInTheConversation(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	o := NewOutbox(&out)
	ctx := context.Background()
	addr, root, err := o.StartThread(ctx, channel, conversation.Reply{Text: conversation.T(conversation.P("Run 7k2m9x started"))})
	if err != nil {
		t.Fatal(err)
	}
	if addr != channel || root.MessageID != "1" || root.Address != channel {
		t.Fatalf("StartThread = %+v, %+v; want the conversation itself (a terminal has no threads)", addr, root)
	}
	status, err := o.Post(ctx, addr, conversation.Reply{Text: conversation.T(conversation.P("node build: running"))})
	if err != nil {
		t.Fatal(err)
	}
	if err := o.Edit(ctx, status, conversation.Reply{Text: conversation.T(conversation.P("node build: done"))}); err != nil {
		t.Fatal(err)
	}
	want := "Run 7k2m9x started\nnode build: running\nnode build: done\n"
	checkPrinted(t, &out, want)
}

func TestOutboxRejectsBadAddresses(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	o := NewOutbox(&out)
	ctx := context.Background()
	reply := conversation.Reply{Text: conversation.T(conversation.P("x"))}
	if _, err := o.Post(ctx, conversation.Address{Platform: "slack", ChannelID: "C1"}, reply); !errors.Is(err, ErrWrongPlatform) {
		t.Fatalf("Post to slack = %v, want ErrWrongPlatform", err)
	}
	for _, id := range []string{"0", "-1", "x", ""} {
		err := o.Edit(ctx, conversation.Ref{Address: channel, MessageID: id}, reply)
		if !errors.Is(err, ErrUnknownMessage) {
			t.Fatalf("Edit of never-posted message %q = %v, want ErrUnknownMessage", id, err)
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := o.Post(cancelled, channel, reply); !errors.Is(err, context.Canceled) {
		t.Fatalf("Post with a cancelled context = %v, want context.Canceled", err)
	}
	if out.Len() != 0 {
		t.Fatalf("printed %q for rejected calls", out.String())
	}
}

// lockedBuffer lets the test read what concurrent posts wrote; Outbox itself serialises its writes.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func TestConcurrentPostsGetUniqueIDsAndWholeReplies(t *testing.T) {
	t.Parallel()
	var out lockedBuffer
	o := NewOutbox(&out)
	const n = 50
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			text := fmt.Sprintf("line one of %d\nline two of %d", i, i)
			ref, err := o.Post(context.Background(), channel, conversation.Reply{Text: conversation.T(conversation.P(text))})
			if err != nil {
				t.Error(err)
			}
			ids[i] = ref.MessageID
		})
	}
	wg.Wait()
	seen := map[string]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Fatalf("message id %q given twice", id)
		}
		seen[id] = true
	}
	lines := strings.Split(strings.TrimSuffix(out.b.String(), "\n"), "\n")
	for i := 0; i < len(lines); i += 2 {
		var a, b int
		if _, err := fmt.Sscanf(lines[i], "line one of %d", &a); err != nil {
			t.Fatalf("line %d = %q: replies interleaved", i, lines[i])
		}
		if _, err := fmt.Sscanf(lines[i+1], "line two of %d", &b); err != nil || a != b {
			t.Fatalf("lines %q, %q: replies interleaved", lines[i], lines[i+1])
		}
	}
}

// A terminal prints an edit only when it shows something new: not the edit that takes a gate's
// buttons away (the decision follows as a message of its own), nor the edit of a message an earlier
// process printed, which is no failure either.
func TestEditPrintsNoDuplicatesAndNoInternalIDs(t *testing.T) {
	var out bytes.Buffer
	o := NewOutbox(&out)
	ctx := context.Background()
	gate, err := o.Post(ctx, channel, conversation.Reply{Text: conversation.T(conversation.P("Ship it?")),
		Buttons: []conversation.Button{{Label: "Approve", Command: "/workflow approve 7k2m9x4q1c"}}})
	if err != nil {
		t.Fatal(err)
	}
	decided := conversation.Reply{Text: conversation.T(conversation.P("Approved by bob"))}
	if err := o.Edit(ctx, gate, decided); err != nil {
		t.Fatal(err)
	}
	if err := o.Edit(ctx, conversation.Ref{Address: channel, MessageID: "7"}, decided); err != nil {
		t.Fatalf("edit of a message an earlier process printed = %v, want nil", err)
	}
	want := "Ship it?\n  [Approve] /workflow approve 7k2m9x4q1c\n"
	checkPrinted(t, &out, want)
}

// TestKeyedReplyPrintsOnce: a keyed reply posted again by the same process prints nothing and
// returns its ref; the terminal cannot know what an earlier process printed, so a new Outbox (a
// restarted bot chat) prints it again, as design-notes says.
func TestKeyedReplyPrintsOnce(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	o := NewOutbox(&out)
	gate := conversation.Reply{Text: conversation.T(conversation.P("Ship it?")), Key: "r1/gate@3"}
	first, err := o.Post(t.Context(), channel, gate)
	if err != nil {
		t.Fatal(err)
	}
	thread, again, err := o.StartThread(t.Context(), channel, gate)
	if err != nil || again != first || thread != channel {
		t.Fatalf("the same keyed reply again = %+v %+v, %v; want %+v in the same conversation", thread, again, err, first)
	}
	other := conversation.Address{Platform: Platform, ChannelID: "other"}
	if _, err := o.Post(t.Context(), other, gate); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != "Ship it?\nShip it?\n" {
		t.Fatalf("printed %q; want the question once here and once in the other conversation", got)
	}
	for i := range keepKeys {
		if _, err := o.Post(t.Context(), channel, conversation.Reply{Text: conversation.T(conversation.P("n")), Key: fmt.Sprint("k", i)}); err != nil {
			t.Fatal(err)
		}
	}
	out.Reset()
	if _, err := o.Post(t.Context(), channel, gate); err != nil || out.String() != "Ship it?\n" {
		t.Errorf("after %d newer keys: printed %q, %v; want the forgotten key printed again", keepKeys, out.String(), err)
	}
	var restarted bytes.Buffer
	if _, err := NewOutbox(&restarted).Post(t.Context(), channel, gate); err != nil || restarted.String() != "Ship it?\n" {
		t.Errorf("a new Outbox printed %q, %v; want the question (it cannot know)", restarted.String(), err)
	}
	if _, err := o.Post(t.Context(), channel, conversation.Reply{Text: gate.Text, Key: "k", Ephemeral: true, ToUser: "console:alice"}); !errors.Is(err, conversation.ErrBadKey) {
		t.Errorf("a keyed ephemeral reply: %v, want ErrBadKey", err)
	}
}
