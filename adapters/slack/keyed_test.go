package slack

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"threadflow/adapters/slack/slackfake"
	"threadflow/conversation"
)

// restart is a new adapter on the same fake: what a bot that stopped after Slack accepted a post,
// and before it recorded that, starts again with. It knows nothing of what was posted.
func restart(t *testing.T, fake *slackfake.Server) conversation.Outbox {
	return newAdapter(t, fake, &recorder{}).Outbox()
}

func finder(t *testing.T, ob conversation.Outbox) conversation.Finder {
	t.Helper()
	f, ok := ob.(conversation.Finder)
	if !ok {
		t.Fatal("the Slack outbox is not a conversation.Finder")
	}
	return f
}

// keyOf is the idempotency key a message carries in its metadata, with its chunk index.
func keyOf(m slackfake.Message) string {
	if m.Metadata.EventType != metadataType {
		return ""
	}
	return fmt.Sprint(m.Metadata.Payload["key"], "#", m.Metadata.Payload["chunk"], "/", m.Metadata.Payload["chunks"])
}

// TestKeyedPostIsPostedOnce: a thread start and a post repeated with the same key, by the same
// bot and after a restart, post nothing twice and return the first post's thread and refs; a
// restarted bot finds both by key.
func TestKeyedPostIsPostedOnce(t *testing.T) {
	t.Parallel()
	fake := slackfake.New(t)
	out := newAdapter(t, fake, &recorder{}).Outbox()
	announce := conversation.Reply{Text: conversation.T(conversation.P("▶ release run cf4mnfbxfp")), Key: "cf4mnfbxfp/announce"}
	thread, root, err := out.StartThread(t.Context(), addr("C1", ""), announce)
	if err != nil {
		t.Fatal(err)
	}
	gate := conversation.Reply{Text: conversation.T(conversation.P("Ship it?")), Buttons: approveButtons, Key: "cf4mnfbxfp/gate@12"}
	ref, err := out.Post(t.Context(), thread, gate)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := out.Post(t.Context(), thread, gate); err != nil || again != ref {
		t.Fatalf("repeated post = %+v, %v; want %+v", again, err, ref)
	}

	restarted := restart(t, fake)
	againThread, againRoot, err := restarted.StartThread(t.Context(), addr("C1", ""), announce)
	if err != nil || againThread != thread || againRoot != root {
		t.Fatalf("thread start repeated after a restart = %+v %+v, %v; want %+v %+v", againThread, againRoot, err, thread, root)
	}
	if again, err := restarted.Post(t.Context(), thread, gate); err != nil || again != ref {
		t.Fatalf("post repeated after a restart = %+v, %v; want %+v", again, err, ref)
	}
	if top, in := fake.Posts("C1", ""), fake.Posts("C1", thread.ThreadID); top != 1 || in != 1 {
		t.Fatalf("posted %d root(s) and %d gate question(s), want exactly one of each:\n%s", top, in, fake.Dump())
	}
	msgs := fake.Messages("C1")
	if keyOf(msgs[0]) != "cf4mnfbxfp/announce#0/1" || keyOf(msgs[1]) != "cf4mnfbxfp/gate@12#0/1" || len(msgs[1].Buttons) != 3 {
		t.Errorf("messages carry %q and %q (buttons %d); want each its key, chunk 0 of 1, and the gate its buttons",
			keyOf(msgs[0]), keyOf(msgs[1]), len(msgs[1].Buttons))
	}

	f := finder(t, restart(t, fake))
	if got, ok, err := f.Find(t.Context(), thread, gate.Key); err != nil || !ok || got != ref {
		t.Errorf("Find after a restart = %+v, %v, %v; want %+v", got, ok, err, ref)
	}
	if th, got, ok, err := f.FindThread(t.Context(), addr("C1", ""), announce.Key); err != nil || !ok || th != thread || got != root {
		t.Errorf("FindThread after a restart = %+v %+v, %v, %v; want %+v %+v", th, got, ok, err, thread, root)
	}
	for _, tt := range []struct {
		name string
		at   conversation.Address
		key  string
	}{
		{"a key never posted", thread, "cf4mnfbxfp/final"},
		{"the gate's key at the top level", addr("C1", ""), gate.Key},
		{"the gate's key in another channel", addr("C2", ""), gate.Key},
	} {
		if got, ok, err := f.Find(t.Context(), tt.at, tt.key); err != nil || ok {
			t.Errorf("Find of %s = %+v, %v, %v; want not found", tt.name, got, ok, err)
		}
	}
}

// TestKeyedLongReplyPostsOnlyTheMissingChunks: a bot that stopped in the middle of a long keyed
// reply posts, when it posts it again, only the messages that did not reach Slack.
func TestKeyedLongReplyPostsOnlyTheMissingChunks(t *testing.T) {
	t.Parallel()
	fake := slackfake.New(t)
	thread, _, err := newAdapter(t, fake, &recorder{}).Outbox().StartThread(t.Context(), addr("C1", ""),
		conversation.Reply{Text: conversation.T(conversation.P("▶ loud"))})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	for i := 0; b.Len() < 12000; i++ {
		fmt.Fprintf(&b, "line %04d of the output\n", i)
	}
	final := conversation.Reply{Text: conversation.T(conversation.O(b.String())), Buttons: approveButtons[2:], Key: "r1/final"}

	fake.RefusePostsAfter(2)
	stopping := newAdapter(t, fake, &recorder{})
	stopping.out.send.attempts = 1 // it stops at the first refusal
	if _, err := stopping.Outbox().Post(t.Context(), thread, final); err == nil {
		t.Fatal("the post succeeded although Slack refused its third message")
	}
	fake.RefusePostsAfter(-1)
	restarted := restart(t, fake)
	if _, ok, err := finder(t, restarted).Find(t.Context(), thread, final.Key); err != nil || ok {
		t.Fatalf("Find of a reply two of whose messages were posted = %v, %v; want not found", ok, err)
	}
	ref, err := restarted.Post(t.Context(), thread, final)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, m := range fake.Messages("C1")[1:] {
		keys = append(keys, keyOf(m))
	}
	n := len(keys)
	if n < 4 {
		t.Fatalf("12,000 characters went out as %d messages, want 4 or more", n)
	}
	for i, k := range keys {
		if want := fmt.Sprintf("r1/final#%d/%d", i, n); k != want {
			t.Errorf("message %d carries %q, want %q: each chunk once, in order", i, k, want)
		}
	}
	last := fake.Messages("C1")[n]
	if ref.MessageID != last.TS || len(last.Buttons) != 1 || fake.Posts("C1", thread.ThreadID) != n {
		t.Errorf("ref %+v, last message %s with %d button(s), %d posts; want the last message's ref, its button, each chunk posted once",
			ref, last.TS, len(last.Buttons), fake.Posts("C1", thread.ThreadID))
	}
	if got, ok, err := finder(t, restart(t, fake)).Find(t.Context(), thread, final.Key); err != nil || !ok || got != ref {
		t.Errorf("Find of the whole reply = %+v, %v, %v; want %+v", got, ok, err, ref)
	}
}

// TestKeyedPostWhoseAnswerWasLostIsNotRepeated: when the connection breaks after Slack accepted a
// keyed message, the retry finds it instead of posting it again.
func TestKeyedPostWhoseAnswerWasLostIsNotRepeated(t *testing.T) {
	t.Parallel()
	fake := slackfake.New(t)
	out := newAdapter(t, fake, &recorder{}).Outbox()
	fake.LoseNextAnswers(1)
	ref, err := out.Post(t.Context(), addr("C1", ""), conversation.Reply{Text: conversation.T(conversation.P("done")), Key: "r1/final"})
	if err != nil {
		t.Fatal(err)
	}
	if msgs := fake.Messages("C1"); len(msgs) != 1 || msgs[0].TS != ref.MessageID || fake.Posts("C1", "") != 1 {
		t.Fatalf("channel shows %+v for ref %+v; want the one message", msgs, ref)
	}
	// Without a key the bot cannot know, and posts again: a rare duplicate beats a lost message.
	fake.LoseNextAnswers(1)
	if _, err := out.Post(t.Context(), addr("C2", ""), conversation.Reply{Text: conversation.T(conversation.P("unkeyed"))}); err != nil {
		t.Fatal(err)
	}
	if n := fake.Posts("C2", ""); n != 2 {
		t.Errorf("an unkeyed post whose answer was lost went out %d time(s), want 2", n)
	}
}

func TestKeyedEphemeralReplyIsRefused(t *testing.T) {
	t.Parallel()
	fake := slackfake.New(t)
	out := newAdapter(t, fake, &recorder{}).Outbox()
	_, err := out.Post(t.Context(), addr("C1", ""), conversation.Reply{Text: conversation.T(conversation.P("psst")),
		Ephemeral: true, ToUser: "slack:U7", Key: "k"})
	if !errors.Is(err, conversation.ErrBadKey) || len(fake.Ephemerals("U7")) != 0 {
		t.Fatalf("a keyed ephemeral reply: %v, shown %d time(s); want ErrBadKey and nothing shown", err, len(fake.Ephemerals("U7")))
	}
	if _, _, err := finder(t, out).Find(t.Context(), addr("C1", ""), ""); !errors.Is(err, conversation.ErrBadKey) {
		t.Errorf("Find without a key: %v, want ErrBadKey", err)
	}
}

// TestKeyedPostThatCannotLookIsPostedAnyway: when Slack refuses the read (an app installed without
// a history scope), a keyed reply is still posted, once, and Find says why it cannot answer.
func TestKeyedPostThatCannotLookIsPostedAnyway(t *testing.T) {
	t.Parallel()
	fake := slackfake.New(t)
	out := newAdapter(t, fake, &recorder{}).Outbox()
	fake.FailReads("missing_scope")
	ref, err := out.Post(t.Context(), addr("C1", ""), conversation.Reply{Text: conversation.T(conversation.P("done")), Key: "r1/final"})
	if err != nil || fake.Posts("C1", "") != 1 || fake.Messages("C1")[0].TS != ref.MessageID {
		t.Fatalf("Post = %+v, %v with %d post(s); want the message posted once", ref, err, fake.Posts("C1", ""))
	}
	if _, _, err := finder(t, out).Find(t.Context(), addr("C1", ""), "r1/final"); err == nil || !strings.Contains(err.Error(), "missing_scope") {
		t.Errorf("Find while Slack refuses reads: %v, want the missing_scope error", err)
	}
}

// TestFirstAttemptPostsWithoutLooking: the outbox's first try of a keyed message is posted without
// reading the conversation (Slack's reads are rate limited); a later try looks first.
func TestFirstAttemptPostsWithoutLooking(t *testing.T) {
	t.Parallel()
	fake := slackfake.New(t)
	out := newAdapter(t, fake, &recorder{}).Outbox()
	first := conversation.Reply{Text: conversation.T(conversation.P("Ship it?")), Key: "k1/gate", FirstAttempt: true}
	ref, err := out.Post(t.Context(), addr("C1", ""), first)
	if err != nil || fake.Reads() != 0 {
		t.Fatalf("first attempt = %+v, %v after %d reads; want posted without reading", ref, err, fake.Reads())
	}
	again := first
	again.FirstAttempt = false
	if got, err := out.Post(t.Context(), addr("C1", ""), again); err != nil || got != ref || fake.Reads() == 0 {
		t.Fatalf("later attempt = %+v, %v after %d reads; want the first post found by reading", got, err, fake.Reads())
	}
	if n := fake.Posts("C1", ""); n != 1 {
		t.Fatalf("%d posts, want 1", n)
	}
}
