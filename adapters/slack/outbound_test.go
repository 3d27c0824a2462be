package slack

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"threadflow/adapters/slack/slackfake"
	"threadflow/conversation"
)

var approveButtons = []conversation.Button{
	{Label: "Approve", Command: "/workflow approve 7k2m9x4q1c", Style: conversation.StylePrimary},
	{Label: "Reject", Command: "/workflow reject 7k2m9x4q1c", Style: conversation.StyleDanger},
	{Label: "Status", Command: "/workflow status 7k2m9x4q1c"},
}

func TestButtonsClickAndEdit(t *testing.T) {
	t.Parallel()
	fake, rec, a := startAdapter(t)
	out := a.Outbox()
	thread := addr("C1", "1.0")
	ref, err := out.Post(t.Context(), thread, conversation.Reply{
		Text: conversation.T(conversation.P("Gate "), conversation.B("deploy"), conversation.P(" needs approval")), Buttons: approveButtons})
	if err != nil {
		t.Fatalf("Post: %v", err)
	}
	msg := botPosts(t, fake, "C1", 1)[0]
	if msg.TS != ref.MessageID || msg.ThreadTS != "1.0" || msg.Text != "Gate *deploy* needs approval" {
		t.Fatalf("posted %+v, ref %+v", msg, ref)
	}
	wantButtons := []slackfake.Button{
		{Label: "Approve", Value: "/workflow approve 7k2m9x4q1c", Style: "primary"},
		{Label: "Reject", Value: "/workflow reject 7k2m9x4q1c", Style: "danger"},
		{Label: "Status", Value: "/workflow status 7k2m9x4q1c"},
	}
	assertButtons(t, msg.Buttons, wantButtons)
	if !strings.Contains(msg.Blocks, `"type":"section"`) {
		t.Errorf("blocks %s have no section with the text", msg.Blocks)
	}

	fake.Click("U2", msg, "Approve")
	got := rec.waitMessages(t, fake, 1)[0]
	wantRef := conversation.Ref{Address: thread, MessageID: msg.TS}
	if got.Text != "/workflow approve 7k2m9x4q1c" || got.UserID != "slack:U2" || got.Action == nil ||
		got.Action.Ref != wantRef || !strings.HasPrefix(got.EventID, "click:") || got.Address != thread {
		t.Fatalf("click became %+v (action %+v), want the approve command with ref %+v", got, got.Action, wantRef)
	}

	err = out.Edit(t.Context(), got.Action.Ref, conversation.Reply{Text: conversation.T(conversation.P("Approved by "), conversation.U("<@U2>"))})
	if err != nil {
		t.Fatalf("Edit: %v", err)
	}
	edited := fake.Messages("C1")[0]
	if !edited.Edited || len(edited.Buttons) != 0 || edited.Blocks != "" || edited.Text != "Approved by &lt;@U2&gt;" {
		t.Fatalf("after edit: %+v, want the new text and no buttons", edited)
	}
}

// postToEdit posts "v1" in C1 through a new adapter, for a test to edit it.
func postToEdit(t *testing.T) (*slackfake.Server, conversation.Outbox, conversation.Ref) {
	t.Helper()
	fake := slackfake.New(t)
	out := newAdapter(t, fake, &recorder{}).Outbox()
	ref, err := out.Post(t.Context(), addr("C1", ""), conversation.Reply{Text: conversation.T(conversation.P("v1"))})
	if err != nil {
		t.Fatal(err)
	}
	return fake, out, ref
}

func TestEditKeepsButtonsWhenReplyHasThem(t *testing.T) {
	t.Parallel()
	fake, out, ref := postToEdit(t)
	reply := conversation.Reply{Text: conversation.T(conversation.P("v2")), Buttons: approveButtons[:1]}
	if err := out.Edit(t.Context(), ref, reply); err != nil {
		t.Fatal(err)
	}
	m := fake.Messages("C1")[0]
	if m.Text != "v2" || len(m.Buttons) != 1 || m.Buttons[0].Value != approveButtons[0].Command {
		t.Fatalf("after edit: %+v", m)
	}
}

func TestLongOutputIsSplitWithBalancedFences(t *testing.T) {
	t.Parallel()
	fake := slackfake.New(t)
	out := newAdapter(t, fake, &recorder{}).Outbox()
	var b strings.Builder
	b.WriteString("## Build log\n```\n")
	for i := 0; b.Len() < 10000; i++ {
		fmt.Fprintf(&b, "step %04d: compiled package <pkg%d> & linked\n", i, i)
	}
	b.WriteString("```\nall **done**")
	reply := conversation.Reply{Text: conversation.T(conversation.O(b.String())), Buttons: approveButtons[:1]}

	ref, err := out.Post(t.Context(), addr("C1", "1.0"), reply)
	if err != nil {
		t.Fatal(err)
	}
	msgs := fake.Messages("C1")
	if len(msgs) < 3 {
		t.Fatalf("10,000 characters went out as %d message(s), want several", len(msgs))
	}
	for i, m := range msgs {
		if len(m.Text) > chunkLimit || m.ThreadTS != "1.0" {
			t.Errorf("message %d: %d bytes in thread %q", i, len(m.Text), m.ThreadTS)
		}
		if fenceLines(m.Text)%2 != 0 {
			t.Errorf("message %d has unbalanced fences:\n%s", i, m.Text)
		}
		if hasButtons := len(m.Buttons) > 0; hasButtons != (i == len(msgs)-1) {
			t.Errorf("message %d has buttons=%v; only the last may", i, hasButtons)
		}
	}
	last := msgs[len(msgs)-1]
	if ref.MessageID != last.TS || !strings.HasSuffix(last.Text, "all *done*") {
		t.Errorf("ref %q, last message %q: want the ref of the last message, which ends the output", ref.MessageID, last.Text)
	}
	if !strings.Contains(msgs[0].Text, "*Build log*") || !strings.Contains(msgs[0].Text, "&lt;pkg0&gt; &amp; linked") {
		t.Errorf("first message does not start the converted, escaped output: %.200q", msgs[0].Text)
	}
}

func TestUntrustedTextCannotPing(t *testing.T) {
	t.Parallel()
	fake := slackfake.New(t)
	out := newAdapter(t, fake, &recorder{}).Outbox()
	reply := conversation.Reply{Text: conversation.T(
		conversation.P("Request: "), conversation.U("<!channel> deploy <@U999>"),
		conversation.P("\nOutput: "), conversation.O("<!here> [click](https://e.com/<!everyone>) <@U999>"))}
	if _, err := out.Post(t.Context(), addr("C1", ""), reply); err != nil {
		t.Fatal(err)
	}
	got := fake.Messages("C1")[0].Text
	for _, live := range []string{"<!", "<@"} {
		if strings.Contains(got, live) {
			t.Fatalf("posted text %q contains a live %q", got, live)
		}
	}
	if !strings.Contains(got, "&lt;!channel&gt; deploy &lt;@U999&gt;") {
		t.Fatalf("posted text %q does not show the user's text escaped", got)
	}
}

func TestRateLimitedPostIsRetried(t *testing.T) {
	t.Parallel()
	fake := slackfake.New(t)
	out := newAdapter(t, fake, &recorder{}).Outbox()
	fake.RateLimitNext(1)
	if _, err := out.Post(t.Context(), addr("C1", ""), conversation.Reply{Text: conversation.T(conversation.P("hi"))}); err != nil {
		t.Fatalf("Post after a 429: %v", err)
	}
	if msgs := fake.Messages("C1"); len(msgs) != 1 || msgs[0].Text != "hi" {
		t.Fatalf("channel shows %+v, want exactly one \"hi\"", msgs)
	}
}

func TestEphemeralReply(t *testing.T) {
	t.Parallel()
	fake := slackfake.New(t)
	out := newAdapter(t, fake, &recorder{}).Outbox()
	reply := conversation.Reply{Text: conversation.T(conversation.P("only you")), Ephemeral: true, ToUser: "slack:U7"}
	if _, err := out.Post(t.Context(), addr("C1", "1.0"), reply); err != nil {
		t.Fatal(err)
	}
	if got := fake.Ephemerals("U7"); len(got) != 1 || got[0].Text != "only you" || got[0].ThreadTS != "1.0" {
		t.Fatalf("ephemerals of U7 = %+v", got)
	}
	if got := fake.Messages("C1"); len(got) != 0 {
		t.Fatalf("an ephemeral reply reached the channel: %+v", got)
	}
	reply.ToUser = "discord:7"
	if _, err := out.Post(t.Context(), addr("C1", ""), reply); !errors.Is(err, ErrNoRecipient) {
		t.Fatalf("Post to a non-slack user = %v, want ErrNoRecipient", err)
	}
}

func TestStartThread(t *testing.T) {
	t.Parallel()
	fake := slackfake.New(t)
	out := newAdapter(t, fake, &recorder{}).Outbox()
	in := addr("C1", "")
	thread, ref, err := out.StartThread(t.Context(), in, conversation.Reply{Text: conversation.T(conversation.P("Run started"))})
	if err != nil {
		t.Fatal(err)
	}
	root := fake.Messages("C1")[0]
	if root.ThreadTS != "" || thread != addr("C1", root.TS) || ref.MessageID != root.TS {
		t.Fatalf("thread %+v ref %+v for root %+v", thread, ref, root)
	}
	if _, err := out.Post(t.Context(), thread, conversation.Reply{Text: conversation.T(conversation.P("step 1"))}); err != nil {
		t.Fatal(err)
	}
	if reply := fake.Messages("C1")[1]; reply.ThreadTS != root.TS {
		t.Fatalf("reply landed in thread %q, want %q", reply.ThreadTS, root.TS)
	}
}

func TestEmptyReplyRejected(t *testing.T) {
	t.Parallel()
	fake := slackfake.New(t)
	out := newAdapter(t, fake, &recorder{}).Outbox()
	if _, err := out.Post(t.Context(), addr("C1", ""), conversation.Reply{}); !errors.Is(err, ErrEmptyReply) {
		t.Fatalf("Post(empty) = %v, want ErrEmptyReply", err)
	}
}

func assertButtons(t *testing.T, got []slackfake.Button, want []slackfake.Button) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("buttons %+v, want %+v", got, want)
	}
	ids := map[string]bool{}
	for i := range got {
		ids[got[i].ActionID] = true
		got[i].ActionID = ""
		if got[i] != want[i] {
			t.Errorf("button %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if len(ids) != len(got) {
		t.Errorf("action ids are not unique per button")
	}
}

func TestEditOfLongTextIsCutToOneMessage(t *testing.T) {
	t.Parallel()
	fake, out, ref := postToEdit(t)
	long := conversation.Reply{Text: conversation.T(conversation.O("```\n" + strings.Repeat("x\n", 4000) + "```")), Buttons: approveButtons}
	if err := out.Edit(t.Context(), ref, long); err != nil {
		t.Fatalf("Edit with long text and buttons: %v", err)
	}
	m := fake.Messages("C1")[0]
	if len(m.Text) > sectionLimit || !strings.HasSuffix(m.Text, "_(truncated)_") || fenceLines(m.Text)%2 != 0 || len(m.Buttons) != 3 {
		t.Fatalf("edited to %d bytes ending %q with %d buttons", len(m.Text), m.Text[len(m.Text)-30:], len(m.Buttons))
	}
}
