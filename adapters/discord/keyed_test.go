package discord

import (
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"threadflow/adapters/discord/discordfake"
	"threadflow/conversation"
)

// restart is a new adapter on the same fake, not connected to the gateway (the outbox needs only
// REST): what a bot that stopped after Discord accepted a post, and before it recorded that,
// starts again with. It knows nothing of what was posted.
func restart(t *testing.T, fake *discordfake.Server) conversation.Outbox {
	t.Helper()
	a, err := New(Config{BotToken: "test-token", AppID: discordfake.AppID, APIURL: fake.URL(), Log: zaptest.NewLogger(t)},
		&recorder{fake: fake}, &stubAC{}, newClaimer())
	if err != nil {
		t.Fatal(err)
	}
	a.retry.base = time.Millisecond
	return a.Outbox()
}

// TestKeyedPostIsPostedOnce: a thread start and a post repeated with the same key, by the same bot
// and after a restart, create nothing twice and return the first post's thread and refs, through
// the nonce Discord enforces; unkeyed messages carry no nonce.
func TestKeyedPostIsPostedOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	out := e.adapter.Outbox()
	announce := conversation.Reply{Text: conversation.T(conversation.P("▶ release run cf4mnfbxfp")), Key: "cf4mnfbxfp/announce"}
	thread, root, err := out.StartThread(t.Context(), channel500, announce)
	if err != nil {
		t.Fatal(err)
	}
	gate := conversation.Reply{Text: conversation.T(conversation.P("Ship it?")), Key: "cf4mnfbxfp/gate@12",
		Buttons: []conversation.Button{{Label: "Approve", Command: "/workflow approve cf4mnfbxfp"}}}
	ref, err := out.Post(t.Context(), thread, gate)
	if err != nil {
		t.Fatal(err)
	}
	if again, err := out.Post(t.Context(), thread, gate); err != nil || again != ref {
		t.Fatalf("repeated post = %+v, %v; want %+v", again, err, ref)
	}

	restarted := restart(t, e.fake)
	againThread, againRoot, err := restarted.StartThread(t.Context(), channel500, announce)
	if err != nil || againThread != thread || againRoot != root {
		t.Fatalf("thread start repeated after a restart = %+v %+v, %v; want %+v %+v", againThread, againRoot, err, thread, root)
	}
	if again, err := restarted.Post(t.Context(), thread, gate); err != nil || again != ref {
		t.Fatalf("post repeated after a restart = %+v, %v; want %+v", again, err, ref)
	}
	if roots, gates, threads := e.fake.Posts("500"), e.fake.Posts(thread.ThreadID), len(e.fake.Threads()); roots != 1 || gates != 1 || threads != 1 {
		t.Fatalf("created %d root(s), %d gate question(s), %d thread(s); want one of each:\n%s", roots, gates, threads, e.fake.Dump())
	}
	posted := e.fake.BotMessages(thread.ThreadID)[0]
	if posted.Nonce != nonceOf(conversation.ChunkKey(gate.Key, 0)) || len(posted.Nonce) != 25 || len(posted.Buttons) != 1 {
		t.Errorf("the gate question carries nonce %q and %d button(s); want the 25 characters of its key's and its button", posted.Nonce, len(posted.Buttons))
	}
	if _, err := out.Post(t.Context(), thread, conversation.Reply{Text: conversation.T(conversation.P("progress"))}); err != nil {
		t.Fatal(err)
	}
	if msgs := e.fake.BotMessages(thread.ThreadID); msgs[len(msgs)-1].Nonce != "" {
		t.Errorf("an unkeyed message carries nonce %q", msgs[len(msgs)-1].Nonce)
	}
	if _, ok := out.(conversation.Finder); ok {
		t.Error("the Discord outbox claims to find messages by key; Discord cannot search by nonce")
	}
}

// TestKeyedLongReplyIsPostedOnce: each message of a long keyed reply has a nonce of its own, so a
// repeat creates none of them again, and a message whose answer was lost is not created twice
// by the retry.
func TestKeyedLongReplyIsPostedOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	final := conversation.Reply{Text: conversation.T(conversation.O(strings.Repeat(strings.Repeat("o", 99)+"\n", 50))), Key: "r1/final"}
	e.fake.LoseNextAnswers(1)
	ref, err := e.adapter.Outbox().Post(t.Context(), channel500, final)
	if err != nil {
		t.Fatal(err)
	}
	msgs := e.fake.BotMessages("500")
	if len(msgs) != 3 || e.fake.Posts("500") != 3 || ref.MessageID != msgs[2].ID {
		t.Fatalf("5,000 characters made %d messages (%d posts), ref %s; want 3, the first's lost answer retried without a duplicate", len(msgs), e.fake.Posts("500"), ref.MessageID)
	}
	nonces := map[string]bool{}
	for _, m := range msgs {
		nonces[m.Nonce] = true
	}
	if len(nonces) != 3 || nonces[""] {
		t.Errorf("nonces %v; want one per message", nonces)
	}
	if again, err := restart(t, e.fake).Post(t.Context(), channel500, final); err != nil || again != ref || e.fake.Posts("500") != 3 {
		t.Errorf("repeat after a restart = %+v, %v (%d posts); want %+v and nothing new", again, err, e.fake.Posts("500"), ref)
	}
}

// TestKeyedPostAfterDiscordsWindowIsPostedAgain: Discord keeps a nonce a few minutes only; a
// repeat after that is a second message. The outbox cannot tell (docs/design-notes.md).
func TestKeyedPostAfterDiscordsWindowIsPostedAgain(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	gate := conversation.Reply{Text: conversation.T(conversation.P("Ship it?")), Key: "r1/gate@3"}
	first, err := e.adapter.Outbox().Post(t.Context(), channel500, gate)
	if err != nil {
		t.Fatal(err)
	}
	e.fake.ForgetNonces()
	later, err := restart(t, e.fake).Post(t.Context(), channel500, gate)
	if err != nil || later == first || e.fake.Posts("500") != 2 {
		t.Errorf("a repeat after the window = %+v, %v (%d posts); want a second message", later, err, e.fake.Posts("500"))
	}
}

func TestKeyedEphemeralReplyIsRefused(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	_, err := e.adapter.Outbox().Post(t.Context(), channel500, conversation.Reply{Text: conversation.T(conversation.P("psst")),
		Ephemeral: true, ToUser: "discord:123456789012345678", Key: "k"})
	if !errors.Is(err, conversation.ErrBadKey) || e.fake.Posts("500") != 0 {
		t.Fatalf("a keyed ephemeral reply: %v, %d posts; want ErrBadKey and nothing posted", err, e.fake.Posts("500"))
	}
}
