package db

import (
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Bounds of the conversation transcripts (transcript_messages). A transcript is what people saw in
// a conversation, not an archive of run output (that is in the run's events): a message's text is
// cut at TranscriptTextBytes, a rendering body beyond TranscriptBodyBytes is dropped (readers fall
// back to the text), and each conversation keeps its newest TranscriptKeep messages, older ones
// being deleted in the transaction that adds a new one. Nothing else expires.
const (
	TranscriptTextBytes = 16 << 10
	TranscriptBodyBytes = 64 << 10
	TranscriptKeep      = 500
	// TranscriptIDBytes bounds the ids of a message (platform, channel, thread, message, run, users).
	TranscriptIDBytes = 256
)

// truncatedMark ends a text that was cut to TranscriptTextBytes.
const truncatedMark = "\n… (cut: longer than the transcript keeps)"

// TranscriptMessage is one message of a conversation's transcript: posted by the bot on a platform
// (From empty) or typed by a web chat user.
type TranscriptMessage struct {
	// Seq is given by the store on every insert and edit and only grows: the larger a
	// conversation's newest Seq, the later its state.
	Seq            int64
	ConversationID string // the transcript the message belongs to (a web user's chat, a Slack thread)
	Platform       string
	ChannelID      string
	ThreadID       string
	MessageID      string // the platform's id of the message; an edit finds its row by it
	RunID          string // the run the message reports on, when there is one
	From           string // platform-qualified user who typed it; empty for the bot's messages
	ToUser         string // set for ephemeral replies: shown to that user only
	Text           string // the message without markup
	Body           []byte // the adapter-neutral rendering (JSON of spans and buttons); may be empty
	PostedAt       time.Time
	EditedAt       time.Time // zero unless edited
}

// Bounded checks m's ids and cuts its text and body to the transcript's bounds. It is the one
// place that decides what a transcript row may hold; engines call it before writing.
func (m TranscriptMessage) Bounded() (TranscriptMessage, error) {
	for name, v := range map[string]string{"conversation": m.ConversationID, "platform": m.Platform, "channel": m.ChannelID, "message id": m.MessageID} {
		if v == "" {
			return m, fmt.Errorf("transcript message: empty %s", name)
		}
	}
	for _, v := range []string{m.ConversationID, m.Platform, m.ChannelID, m.ThreadID, m.MessageID, m.RunID, m.From, m.ToUser} {
		if len(v) > TranscriptIDBytes {
			return m, fmt.Errorf("transcript message: an id is longer than %d bytes: %.40q…", TranscriptIDBytes, v)
		}
	}
	if len(m.Text) > TranscriptTextBytes {
		m.Text = cutUTF8(m.Text, TranscriptTextBytes-len(truncatedMark)) + truncatedMark
	}
	if len(m.Body) > TranscriptBodyBytes {
		m.Body = nil
	}
	return m, nil
}

// Edited reports whether the message was edited in place after it was posted.
func (m TranscriptMessage) Edited() bool { return !m.EditedAt.IsZero() }

// cutUTF8 returns at most n bytes of s, not splitting a character.
func cutUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return strings.ToValidUTF8(s[:n], "")
}

// TranscriptChanges wakes the readers of transcripts when one changes. Engines own one: SQLite
// calls Notify after its own commits (one process writes the file), PostgreSQL from the
// notifications of every replica (LISTEN/NOTIFY). The zero value is ready to use.
type TranscriptChanges struct {
	mu    sync.Mutex
	waits map[string]chan struct{} // conversation id -> closed at its next change
}

// Wait returns a channel closed at the next change of the conversation's transcript. A wake-up
// may be spurious (NotifyAll); the reader re-reads the transcript and compares its newest Seq.
func (c *TranscriptChanges) Wait(conversationID string) <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.waits == nil {
		c.waits = map[string]chan struct{}{}
	}
	ch := c.waits[conversationID]
	if ch == nil {
		ch = make(chan struct{})
		c.waits[conversationID] = ch
	}
	return ch
}

// Notify wakes the readers of one conversation.
func (c *TranscriptChanges) Notify(conversationID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if ch := c.waits[conversationID]; ch != nil {
		close(ch)
		delete(c.waits, conversationID)
	}
}

// NotifyAll wakes every reader: notifications may have been lost (a dropped connection), so each
// catches up from the database.
func (c *TranscriptChanges) NotifyAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for id, ch := range c.waits {
		close(ch)
		delete(c.waits, id)
	}
}
