package storetest

import (
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"threadflow/db"
)

func transcriptTests() []test {
	return []test{
		{"AppendAndRead", testTranscriptAppendAndRead},
		{"EditInPlace", testTranscriptEditInPlace},
		{"AppendOnce", testTranscriptAppendOnce},
		{"Bounds", testTranscriptBounds},
		{"KeepsNewest", testTranscriptKeepsNewest},
		{"ChangeWakesReaders", testTranscriptChangeWakes},
	}
}

func chatMessage(id, text string) db.TranscriptMessage {
	return db.TranscriptMessage{ConversationID: "web:alice", Platform: "web", ChannelID: "alice", MessageID: id, Text: text}
}

func testTranscriptAppendAndRead(t *testing.T, e *env) {
	typed := chatMessage("m1", "/workflow run hello")
	typed.From = "web:alice"
	status := chatMessage("m2", "▶ hello queued")
	status.RunID, status.Body = "run0000001", []byte(`{"text":[]}`)
	private := chatMessage("m3", "only for alice")
	private.ToUser = "web:alice"
	other := db.TranscriptMessage{ConversationID: "slack:C1:1.2", Platform: "slack", ChannelID: "C1", ThreadID: "1.2", MessageID: "1.3", Text: "elsewhere"}
	var last int64
	for _, m := range []db.TranscriptMessage{typed, status, other, private} {
		got, err := e.s.AppendMessage(e.ctx, m)
		if err != nil {
			t.Fatalf("AppendMessage(%s): %v", m.MessageID, err)
		}
		if got.Seq <= last || !got.PostedAt.Equal(e.clock.Now()) || got.Edited() {
			t.Fatalf("AppendMessage(%s) = seq %d posted %v edited %v; want seq above %d, posted now, not edited", m.MessageID, got.Seq, got.PostedAt, got.Edited(), last)
		}
		last = got.Seq
	}
	msgs, err := e.s.Transcript(e.ctx, "web:alice", 10)
	if err != nil || len(msgs) != 3 {
		t.Fatalf("Transcript = %+v, %v; want alice's 3 messages", msgs, err)
	}
	if msgs[0].Text != typed.Text || msgs[0].From != "web:alice" || msgs[1].RunID != "run0000001" || string(msgs[1].Body) != `{"text":[]}` ||
		msgs[2].ToUser != "web:alice" {
		t.Fatalf("Transcript = %+v; want typed, status (run, body), private, in that order", msgs)
	}
	if newest, err := e.s.Transcript(e.ctx, "web:alice", 1); err != nil || len(newest) != 1 || newest[0].MessageID != "m3" {
		t.Fatalf("Transcript limit 1 = %+v, %v; want the newest message only", newest, err)
	}
}

func testTranscriptEditInPlace(t *testing.T, e *env) {
	posted, err := e.s.AppendMessage(e.ctx, chatMessage("s1", "queued"))
	if err != nil {
		t.Fatal(err)
	}
	later, err := e.s.AppendMessage(e.ctx, chatMessage("s2", "another"))
	if err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(5e9)
	edit := chatMessage("s1", "running: build")
	edit.RunID = "run0000002"
	got, err := e.s.EditMessage(e.ctx, edit)
	if err != nil {
		t.Fatalf("EditMessage: %v", err)
	}
	if got.Seq <= later.Seq || got.Text != "running: build" || !got.Edited() || !got.PostedAt.Equal(posted.PostedAt) || got.RunID != "run0000002" {
		t.Fatalf("EditMessage = %+v; want a seq above %d, the new text, edited, first posted time kept, run set", got, later.Seq)
	}
	// Posting the same platform message id again (a retried post) edits it too.
	if _, err := e.s.AppendMessage(e.ctx, chatMessage("s1", "completed")); err != nil {
		t.Fatal(err)
	}
	msgs, err := e.s.Transcript(e.ctx, "web:alice", 10)
	if err != nil || len(msgs) != 2 || msgs[0].Text != "completed" || msgs[0].RunID != "run0000002" || msgs[1].MessageID != "s2" {
		t.Fatalf("Transcript = %+v, %v; want the edited status message in its place, then s2", msgs, err)
	}
	if _, err := e.s.EditMessage(e.ctx, chatMessage("nosuch", "x")); !errors.Is(err, db.ErrNotFound) {
		t.Fatalf("EditMessage of an unrecorded message: %v, want ErrNotFound", err)
	}
}

// testTranscriptAppendOnce: a message recorded once stays as it is when recorded again (a repeated
// post of an idempotency-keyed message), edits included, and FindMessage reads it back.
func testTranscriptAppendOnce(t *testing.T, e *env) {
	first := chatMessage("k1", "Gate ship: approve?")
	first.RunID = "run0000003"
	got, created, err := e.s.AppendMessageOnce(e.ctx, first)
	if err != nil || !created || got.Text != first.Text || got.RunID != "run0000003" || got.Edited() {
		t.Fatalf("AppendMessageOnce = %+v, %v, %v; want the new message, created", got, created, err)
	}
	e.clock.Advance(5e9)
	edited := chatMessage("k1", "Gate ship: approved by bob")
	if _, err := e.s.EditMessage(e.ctx, edited); err != nil {
		t.Fatal(err)
	}
	again, created, err := e.s.AppendMessageOnce(e.ctx, first)
	if err != nil || created || again.Text != edited.Text || again.Seq <= got.Seq || !again.PostedAt.Equal(got.PostedAt) {
		t.Fatalf("AppendMessageOnce again = %+v, %v, %v; want the recorded (edited) message unchanged, not created", again, created, err)
	}
	msgs, err := e.s.Transcript(e.ctx, "web:alice", 10)
	if err != nil || len(msgs) != 1 || msgs[0].Seq != again.Seq || msgs[0].Text != edited.Text {
		t.Fatalf("Transcript = %+v, %v; want the one message, unchanged by the repeat", msgs, err)
	}
	found, err := e.s.FindMessage(e.ctx, "web", "alice", "k1")
	if err != nil || found.Seq != again.Seq || found.Text != edited.Text || found.ConversationID != "web:alice" {
		t.Fatalf("FindMessage = %+v, %v; want the recorded message", found, err)
	}
	for _, where := range [][3]string{{"web", "alice", "nosuch"}, {"web", "bob", "k1"}, {"slack", "alice", "k1"}} {
		if _, err := e.s.FindMessage(e.ctx, where[0], where[1], where[2]); !errors.Is(err, db.ErrNotFound) {
			t.Errorf("FindMessage(%q) = %v, want ErrNotFound", where, err)
		}
	}
}

func testTranscriptBounds(t *testing.T, e *env) {
	long := chatMessage("big", strings.Repeat("é", db.TranscriptTextBytes))
	long.Body = make([]byte, db.TranscriptBodyBytes+1)
	got, err := e.s.AppendMessage(e.ctx, long)
	if err != nil {
		t.Fatalf("AppendMessage of a long message: %v", err)
	}
	if len(got.Text) > db.TranscriptTextBytes || !utf8.ValidString(got.Text) || !strings.HasSuffix(got.Text, "longer than the transcript keeps)") || got.Body != nil {
		t.Fatalf("stored %d bytes (valid UTF-8 %v), body %d bytes; want at most %d bytes of text ending in the cut mark and no body",
			len(got.Text), utf8.ValidString(got.Text), len(got.Body), db.TranscriptTextBytes)
	}
	if _, err := e.s.AppendMessage(e.ctx, chatMessage("", "no id")); err == nil {
		t.Fatal("AppendMessage without a message id succeeded")
	}
	if _, err := e.s.AppendMessage(e.ctx, chatMessage(strings.Repeat("9", db.TranscriptIDBytes+1), "x")); err == nil {
		t.Fatal("AppendMessage with an overlong message id succeeded")
	}
}

func testTranscriptKeepsNewest(t *testing.T, e *env) {
	for i := range db.TranscriptKeep + 3 {
		if _, err := e.s.AppendMessage(e.ctx, chatMessage("k"+itoa(i), "m"+itoa(i))); err != nil {
			t.Fatal(err)
		}
	}
	msgs, err := e.s.Transcript(e.ctx, "web:alice", db.TranscriptKeep*2)
	if err != nil || len(msgs) != db.TranscriptKeep || msgs[0].Text != "m3" || msgs[len(msgs)-1].Text != "m"+itoa(db.TranscriptKeep+2) {
		t.Fatalf("Transcript after %d messages: %d kept (%v), first %q; want the newest %d, from m3", db.TranscriptKeep+3, len(msgs), err,
			firstText(msgs), db.TranscriptKeep)
	}
}

func firstText(msgs []db.TranscriptMessage) string {
	if len(msgs) == 0 {
		return ""
	}
	return msgs[0].Text
}

func itoa(i int) string { return strconv.Itoa(i) }

// testTranscriptChangeWakes: a reader waiting on a conversation is woken by a write to it. (On
// PostgreSQL the first wait also starts the listener, whose connect wakes every reader once, so
// the test waits again after a first write.)
func testTranscriptChangeWakes(t *testing.T, e *env) {
	for i := range 2 {
		ch := e.s.TranscriptChanged("web:alice")
		if _, err := e.s.AppendMessage(e.ctx, chatMessage("w"+itoa(i), "hello")); err != nil {
			t.Fatal(err)
		}
		waitClosed(t, ch, "a reader of web:alice woken by a message to it")
	}
}

// waitClosed fails the test unless ch is closed within the suite's deadline.
func waitClosed(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(10 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}
