package web_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"threadflow/adapters/web"
	"threadflow/conversation"
	"threadflow/db"
	"threadflow/db/dbtest"
	"threadflow/testkit"
)

func TestRender(t *testing.T) {
	tests := []struct {
		name string
		in   conversation.Text
		want string
	}{
		{"plain is escaped too", conversation.T(conversation.P("a < b & c")), "a &lt; b &amp; c"},
		{"strong", conversation.T(conversation.B("Active")), "<strong>Active</strong>"},
		{"code", conversation.T(conversation.C(`/workflow run x "<y>"`)), "<code>/workflow run x &#34;&lt;y&gt;&#34;</code>"},
		{"block", conversation.T(conversation.Block("a\n<b>")), "<pre><code>a\n&lt;b&gt;</code></pre>"},
		{"user text", conversation.T(conversation.U(`<img src=x onerror=alert(1)>`)), `<span class="user-text">&lt;img src=x onerror=alert(1)&gt;</span>`},
		{"output", conversation.T(conversation.O("<script>")), `<span class="output">&lt;script&gt;</span>`},
		{"output links and fences are text", conversation.T(conversation.O("[click](https://evil.example) <a href=\"https://evil.example\">x</a>\n```")),
			`<span class="output">[click](https://evil.example) &lt;a href=&#34;https://evil.example&#34;&gt;x&lt;/a&gt;` + "\n```</span>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(web.Render(tt.in)); got != tt.want {
				t.Errorf("Render = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestOutbox(t *testing.T) {
	dbtest.ForEachEngine(t, func(t *testing.T, open func(t testing.TB, opts db.Options) db.Store) {
		ctx := t.Context()
		o := web.NewOutbox(open(t, db.Options{}))
		at := conversation.Address{Platform: web.Platform, ChannelID: "alice"}
		ref, err := o.Post(ctx, at, conversation.Reply{Text: conversation.T(conversation.P("gate?")),
			Buttons: []conversation.Button{{Label: "Approve", Command: "/workflow approve abc"}}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := o.Post(ctx, at, conversation.Reply{Text: conversation.T(conversation.P("just bob")), Ephemeral: true, ToUser: "web:bob"}); err != nil {
			t.Fatal(err)
		}
		changed := o.Changed(at.ConversationID())
		msgs, err := o.Messages(ctx, at.ConversationID(), "web:alice")
		if err != nil || len(msgs) != 1 || len(msgs[0].Buttons) != 1 || msgs[0].ID != ref.MessageID {
			t.Fatalf("alice sees %+v (%v), want the one message with its button (the ephemeral one is bob's)", msgs, err)
		}
		if err := o.Edit(ctx, ref, conversation.Reply{Text: conversation.T(conversation.P("approved"))}); err != nil {
			t.Fatal(err)
		}
		testkit.Eventually(t, "an edit to wake the pages waiting for changes", func() bool {
			select {
			case <-changed:
				return true
			default:
				return false
			}
		})
		if msgs, _ = o.Messages(ctx, at.ConversationID(), "web:alice"); msgs[0].HTML != "approved" || len(msgs[0].Buttons) != 0 || !msgs[0].Edited {
			t.Errorf("after the edit: %+v, want the new text without buttons", msgs[0])
		}
		tests := []struct {
			name string
			err  error
			want error
		}{
			{"edit of an unknown message", o.Edit(ctx, conversation.Ref{Address: at, MessageID: "99"}, conversation.Reply{}), web.ErrUnknownMessage},
			{"post to another platform", func() error {
				_, err := o.Post(ctx, conversation.Address{Platform: "slack", ChannelID: "C"}, conversation.Reply{})
				return err
			}(), web.ErrWrongPlatform},
		}
		for _, tt := range tests {
			if !errors.Is(tt.err, tt.want) {
				t.Errorf("%s: %v, want %v", tt.name, tt.err, tt.want)
			}
		}
	})
}

// The chat page shows a conversation's newest messages; the store keeps more (db.TranscriptKeep).
func TestOutboxShowsRecentMessagesOnly(t *testing.T) {
	o := web.NewOutbox(dbtest.SQLite(t, db.Options{}))
	at := conversation.Address{Platform: web.Platform, ChannelID: "busy"}
	for i := range 250 {
		if _, err := o.Post(t.Context(), at, conversation.Reply{Text: conversation.T(conversation.P(strconv.Itoa(i)))}); err != nil {
			t.Fatal(err)
		}
	}
	if msgs, _ := o.Messages(t.Context(), at.ConversationID(), ""); len(msgs) != 200 || msgs[len(msgs)-1].HTML != "249" || msgs[0].HTML != "50" {
		t.Errorf("shows %d messages (first %s, last %s), want the latest 200", len(msgs), msgs[0].HTML, msgs[len(msgs)-1].HTML)
	}
}

func TestRequireToken(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) })
	h := web.RequireToken("tok-123", ok)
	tests := []struct {
		name   string
		target string
		auth   string
		want   int
	}{
		{"nothing", "/", "", 401},
		{"bearer", "/", "Bearer tok-123", 418},
		{"bearer, any case", "/", "bearer tok-123", 418},
		{"basic is not bearer", "/", "Basic tok-123", 401},
		{"prefix of the token", "/", "Bearer tok-12", 401},
		{"wrong query token", "/?token=nope", "", 401},
		{"query token redirects", "/runs/abc?token=tok-123&state=paused", "", 303},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := httptest.NewRecorder()
			req := httptest.NewRequest("GET", tt.target, nil)
			if tt.auth != "" {
				req.Header.Set("Authorization", tt.auth)
			}
			h.ServeHTTP(rec, req)
			if rec.Code != tt.want {
				t.Fatalf("status %d, want %d", rec.Code, tt.want)
			}
			if rec.Code == 401 && !strings.Contains(rec.Body.String(), "DASHBOARD_TOKEN") {
				t.Errorf("401 body does not say what is needed: %q", rec.Body)
			}
			if rec.Code == 303 && rec.Header().Get("Location") != "/runs/abc?state=paused" {
				t.Errorf("redirect to %q, want the same URL without the token", rec.Header().Get("Location"))
			}
		})
	}
	rec := httptest.NewRecorder()
	web.RequireToken("", ok).ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	if rec.Code != http.StatusTeapot {
		t.Errorf("without a configured token (loopback): status %d, want the page", rec.Code)
	}
}

// onEachEngine runs f on a fresh database of each engine, as a subtest named after it, with an
// outbox on it and a function that opens another store on the same database: a restarted bot, or
// another replica.
func onEachEngine(t *testing.T, f func(t *testing.T, o *web.Outbox, reopen func() db.Store)) {
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			var open func() db.Store
			if engine == "sqlite" {
				path := filepath.Join(t.TempDir(), "threadflow.db")
				open = func() db.Store { return dbtest.SQLiteAt(t, path, db.Options{}) }
			} else {
				url := dbtest.PostgresDatabase(t)
				open = func() db.Store { return dbtest.PostgresOn(t, url, db.Options{}) }
			}
			f(t, web.NewOutbox(open()), open)
		})
	}
}

// TestKeyedThreadIsOpenedOnce: a run's announcement started again (after a crash between the
// start and its record, by this process or another) completes the same thread instead of opening a
// second one: one thread listed, one opening in the asker's conversation, and FindThread finds it.
func TestKeyedThreadIsOpenedOnce(t *testing.T) {
	onEachEngine(t, func(t *testing.T, o *web.Outbox, reopen func() db.Store) {
		ctx := t.Context()
		at := conversation.Address{Platform: web.Platform, ChannelID: "alice"}
		news := conversation.Reply{Text: conversation.T(conversation.P("Run 1 of deploy started.")), Key: "run0000001/announce"}
		if _, _, found, err := o.FindThread(ctx, at, news.Key); err != nil || found {
			t.Fatalf("FindThread before any start = %v, %v; want not found", found, err)
		}
		thread, ref, err := o.StartThread(ctx, at, news)
		if err != nil || thread.ThreadID == "" || ref.Address != thread {
			t.Fatalf("StartThread = %+v, %+v, %v; want a thread and its root", thread, ref, err)
		}

		restarted := web.NewOutbox(reopen())
		again, againRef, err := restarted.StartThread(ctx, at, news)
		if err != nil || again != thread || againRef != ref {
			t.Fatalf("the start repeated after a restart = %+v, %+v, %v; want the first thread %+v, %+v", again, againRef, err, thread, ref)
		}
		found, foundRef, ok, err := restarted.FindThread(ctx, at, news.Key)
		if err != nil || !ok || found != thread || foundRef != ref {
			t.Fatalf("FindThread = %+v, %+v, %v, %v; want %+v, %+v", found, foundRef, ok, err, thread, ref)
		}
		if _, _, ok, err := restarted.FindThread(ctx, conversation.Address{Platform: web.Platform, ChannelID: "bob"}, news.Key); err != nil || ok {
			t.Errorf("FindThread from another conversation = %v, %v; want not found", ok, err)
		}
		listed, err := restarted.Threads(ctx, "web:alice")
		if err != nil || len(listed) != 1 || listed[0].Thread != thread.ThreadID {
			t.Errorf("the chat page lists %+v (%v); want the one thread %s", listed, err, thread.ThreadID)
		}
		mine, err := restarted.Messages(ctx, at.ConversationID(), "web:alice")
		if err != nil || len(mine) != 1 || mine[0].Thread != thread.ThreadID {
			t.Errorf("alice's conversation holds %+v (%v); want one opening linking %s", mine, err, thread.ThreadID)
		}
		other, _, err := restarted.StartThread(ctx, at, conversation.Reply{Text: news.Text, Key: "run0000002/announce"})
		if err != nil || other == thread {
			t.Errorf("a start with another key = %+v, %v; want a thread of its own", other, err)
		}
	})
}

// TestKeyedPostIsPostedOnce: a keyed reply posted again (after a crash between the post and its
// record, by this process or another) is the same message, edits kept, and a restarted outbox
// finds it by its key.
func TestKeyedPostIsPostedOnce(t *testing.T) {
	onEachEngine(t, func(t *testing.T, o *web.Outbox, reopen func() db.Store) {
		ctx := t.Context()
		at := conversation.Address{Platform: web.Platform, ChannelID: "alice"}
		gate := conversation.Reply{Text: conversation.T(conversation.P("Ship it?")), Key: "run0000001/gate@12",
			Buttons: []conversation.Button{{Label: "Approve", Command: "/workflow approve run0000001"}}}
		first, err := o.Post(ctx, at, gate)
		if err != nil {
			t.Fatal(err)
		}
		again, err := o.Post(ctx, at, gate)
		if err != nil || again != first {
			t.Fatalf("the repeated post returned %+v, %v; want the first message's ref %+v", again, err, first)
		}
		if err := o.Edit(ctx, first, conversation.Reply{Text: conversation.T(conversation.P("Approved by bob"))}); err != nil {
			t.Fatal(err)
		}

		restarted := web.NewOutbox(reopen())
		ref, found, err := restarted.Find(ctx, at, gate.Key)
		if err != nil || !found || ref != first {
			t.Fatalf("Find after a restart = %+v, %v, %v; want %+v", ref, found, err, first)
		}
		if thread, _, found, err := restarted.FindThread(ctx, at, gate.Key); err != nil || found {
			t.Fatalf("FindThread of a key that was posted, not started = %+v, %v, %v; want not found", thread, found, err)
		}
		if ref, err := restarted.Post(ctx, at, gate); err != nil || ref != first {
			t.Fatalf("the post repeated after a restart returned %+v, %v; want %+v", ref, err, first)
		}
		msgs, err := restarted.Messages(ctx, at.ConversationID(), "web:alice")
		if err != nil || len(msgs) != 1 || msgs[0].ID != first.MessageID || msgs[0].HTML != "Approved by bob" || len(msgs[0].Buttons) != 0 {
			t.Fatalf("alice sees %+v (%v); want the one message, still as the edit left it", msgs, err)
		}

		other, err := restarted.Post(ctx, at, conversation.Reply{Text: conversation.T(conversation.P("Ship it?")), Key: "run0000001/gate@13"})
		if err != nil || other.MessageID == first.MessageID {
			t.Fatalf("a post with another key = %+v, %v; want a message of its own", other, err)
		}
		if _, found, err := restarted.Find(ctx, at, "run0000001/never"); err != nil || found {
			t.Errorf("Find of a key never posted = %v, %v; want not found", found, err)
		}
		if _, found, err := restarted.Find(ctx, conversation.Address{Platform: web.Platform, ChannelID: "bob"}, gate.Key); err != nil || found {
			t.Errorf("Find in another conversation = %v, %v; want not found", found, err)
		}
		_, err = restarted.Post(ctx, at, conversation.Reply{Text: conversation.T(conversation.P("psst")), Key: "k", Ephemeral: true, ToUser: "web:alice"})
		if !errors.Is(err, conversation.ErrBadKey) {
			t.Errorf("a keyed ephemeral reply: %v, want ErrBadKey", err)
		}
	})
}
