package web

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"slices"
	"time"

	"threadflow/conversation"
	"threadflow/db"
)

// Errors returned by the Outbox.
var (
	ErrWrongPlatform  = errors.New("web: address is not a web address")
	ErrUnknownMessage = errors.New("web: no such message")
)

// keepMessages is how many of a conversation's newest messages the chat page shows; the store
// keeps db.TranscriptKeep of them. threadsShown is how many of the newest run threads it lists.
const (
	keepMessages = 200
	threadsShown = 50
)

// messageIDBytes is the length of a web message id (refPattern): random hex, unique across
// replicas, or for a keyed reply hex of its key's hash, so that posting it again finds its row.
const messageIDBytes = 16

// Transcripts is where the chat page's conversations live: the database, so any replica renders
// any user's page and a restart loses nothing. db.Store satisfies it.
type Transcripts interface {
	AppendMessage(ctx context.Context, m db.TranscriptMessage) (db.TranscriptMessage, error)
	AppendMessageOnce(ctx context.Context, m db.TranscriptMessage) (db.TranscriptMessage, bool, error)
	FindMessage(ctx context.Context, platform, channelID, messageID string) (db.TranscriptMessage, error)
	EditMessage(ctx context.Context, m db.TranscriptMessage) (db.TranscriptMessage, error)
	Transcript(ctx context.Context, conversationID string, limit int) ([]db.TranscriptMessage, error)
	TranscriptChanged(conversationID string) <-chan struct{}
}

// ChatMessage is one message of a web conversation, as the chat page shows it.
type ChatMessage struct {
	ID      string
	HTML    template.HTML
	Buttons []conversation.Button
	From    string // the web user who typed it; empty for the bot's messages
	Mine    bool   // typed by the person viewing the page
	ToUser  string // set for ephemeral replies: shown to that user only
	Thread  string // the run thread this message opens (its root), if any
	RunID   string // the run the message reports on, if any
	At      time.Time
	Edited  bool
}

// Outbox posts the bot's replies to web conversations by recording them in the store's
// transcripts, where every replica's chat page reads them. It implements conversation.Outbox and
// is safe for concurrent use. On the web the transcript is the platform: a message that cannot be
// recorded is not posted, and Post returns the error.
type Outbox struct {
	store  Transcripts
	onPost func() // called after every change; set once by New
}

var (
	_ conversation.Outbox = (*Outbox)(nil)
	_ conversation.Finder = (*Outbox)(nil)
)

// NewOutbox returns an Outbox over store.
func NewOutbox(store Transcripts) *Outbox { return &Outbox{store: store} }

// Platform returns "web".
func (o *Outbox) Platform() string { return Platform }

// Capabilities: a run started on the chat page reports in a thread every web user reads and
// answers (threadsChannel); buttons click, and commands typed in a thread reach the bot.
func (o *Outbox) Capabilities() conversation.Capabilities {
	return conversation.Capabilities{Threads: true, Buttons: true, CommandsInThreads: true}
}

// Post appends r to the conversation of to. A keyed reply gets the message id of its key, so
// posting it again returns the message recorded the first time, as it is now (edits kept),
// instead of adding a second one: the transcript's unique (platform, channel, message id) decides,
// on every replica and after any restart, for as long as the conversation keeps the message
// (db.TranscriptKeep).
func (o *Outbox) Post(ctx context.Context, to conversation.Address, r conversation.Reply) (conversation.Ref, error) {
	if err := check(ctx, to); err != nil {
		return conversation.Ref{}, err
	}
	if err := conversation.CheckKey(r); err != nil {
		return conversation.Ref{}, fmt.Errorf("web: %w", err)
	}
	m := conversation.TranscriptEntry(to, messageID(r.Key), r)
	created := true
	var err error
	if r.Key == "" {
		_, err = o.store.AppendMessage(ctx, m)
	} else {
		_, created, err = o.store.AppendMessageOnce(ctx, m)
	}
	if err != nil {
		return conversation.Ref{}, fmt.Errorf("web: record message: %w", err)
	}
	if created {
		o.kick()
	}
	return conversation.Ref{Address: to, MessageID: m.MessageID}, nil
}

// Find reports whether the reply keyed key was posted to the conversation of to.
func (o *Outbox) Find(ctx context.Context, to conversation.Address, key string) (conversation.Ref, bool, error) {
	if err := check(ctx, to); err != nil {
		return conversation.Ref{}, false, err
	}
	if err := conversation.CheckFind(key); err != nil {
		return conversation.Ref{}, false, fmt.Errorf("web: %w", err)
	}
	id := messageID(key)
	_, err := o.store.FindMessage(ctx, Platform, to.ChannelID, id)
	switch {
	case errors.Is(err, db.ErrNotFound):
		return conversation.Ref{}, false, nil
	case err != nil:
		return conversation.Ref{}, false, fmt.Errorf("web: find message %q: %w", id, err)
	}
	return conversation.Ref{Address: to, MessageID: id}, true, nil
}

// FindThread reports whether StartThread opened a thread with the reply keyed key from the
// conversation of in, and returns that thread and the Ref of its root. It looks for the last row
// StartThread writes (the opening in the conversation of in): a thread whose opening is missing was
// cut short, and StartThread with the same key completes it.
func (o *Outbox) FindThread(ctx context.Context, in conversation.Address, key string) (conversation.Address, conversation.Ref, bool, error) {
	if err := check(ctx, in); err != nil {
		return conversation.Address{}, conversation.Ref{}, false, err
	}
	if err := conversation.CheckFind(key); err != nil {
		return conversation.Address{}, conversation.Ref{}, false, fmt.Errorf("web: %w", err)
	}
	ids := threadIDs(key)
	_, err := o.store.FindMessage(ctx, Platform, in.ChannelID, ids.asked)
	switch {
	case errors.Is(err, db.ErrNotFound):
		return conversation.Address{}, conversation.Ref{}, false, nil
	case err != nil:
		return conversation.Address{}, conversation.Ref{}, false, fmt.Errorf("web: find the opening of thread %q: %w", ids.thread, err)
	}
	thread := threadAddress(ids.thread)
	return thread, conversation.Ref{Address: thread, MessageID: ids.thread}, true, nil
}

// Edit replaces a posted message's content and buttons.
func (o *Outbox) Edit(ctx context.Context, ref conversation.Ref, r conversation.Reply) error {
	if err := check(ctx, ref.Address); err != nil {
		return err
	}
	_, err := o.store.EditMessage(ctx, conversation.TranscriptEntry(ref.Address, ref.MessageID, r))
	switch {
	case errors.Is(err, db.ErrNotFound):
		return fmt.Errorf("%w: edit of message %q", ErrUnknownMessage, ref.MessageID)
	case err != nil:
		return fmt.Errorf("web: edit message %q: %w", ref.MessageID, err)
	}
	o.kick()
	return nil
}

// StartThread opens a run's thread in the shared channel (threadsChannel), so every web user can
// read the run and answer it, as in a Slack channel. The root message r heads the thread, is
// listed on every chat page, and is also posted where the run was asked for (a person's own
// conversation), linking to the thread. A failed write returns the error, so the run reports in in
// as it did before threads (a thread already written then holds only its first message).
//
// A keyed reply opens one thread however often it is started: the thread's id and its three rows'
// ids derive from the key (threadIDs) and each row is recorded once, so a start repeated after a
// crash between the writes and their record (by this replica or another) completes the same
// thread instead of opening a second one that the chat page would list beside the first.
func (o *Outbox) StartThread(ctx context.Context, in conversation.Address, r conversation.Reply) (conversation.Address, conversation.Ref, error) {
	if err := check(ctx, in); err != nil {
		return conversation.Address{}, conversation.Ref{}, err
	}
	if err := conversation.CheckKey(r); err != nil {
		return conversation.Address{}, conversation.Ref{}, fmt.Errorf("web: %w", err)
	}
	ids := threadIDs(r.Key)
	thread := threadAddress(ids.thread)
	head := conversation.TranscriptEntry(thread, ids.thread, r)
	listed := opening(threadsIndex, ids.listed, thread, r)
	asked := opening(in, ids.asked, thread, r)
	for _, m := range []db.TranscriptMessage{head, listed, asked} { // asked last: FindThread looks for it
		var err error
		if r.Key == "" {
			_, err = o.store.AppendMessage(ctx, m)
		} else {
			_, _, err = o.store.AppendMessageOnce(ctx, m)
		}
		if err != nil {
			return conversation.Address{}, conversation.Ref{}, fmt.Errorf("web: open a run thread: %w", err)
		}
	}
	o.kick()
	return thread, conversation.Ref{Address: thread, MessageID: head.MessageID}, nil
}

// rowIDs are the message ids of a run thread's three rows; the thread's id is its root's.
type rowIDs struct{ thread, listed, asked string }

// threadIDs are the ids of the rows StartThread writes for a reply keyed key: derived from the
// key, so every replica writes the same rows; fresh random ones when unkeyed. The root and the
// listed opening share the channel threadsChannel, hence ids of their own; a key has no control
// character (conversation.CheckKey), so no Post's key derives any of them.
func threadIDs(key string) rowIDs {
	if key == "" {
		return rowIDs{newMessageID(), newMessageID(), newMessageID()}
	}
	return rowIDs{messageID(key + "\x00thread"), messageID(key + "\x00listed"), messageID(key + "\x00asked")}
}

// opening is the transcript row, in the conversation at, of a message that opens thread: the
// chat page shows it with a link to the thread.
func opening(at conversation.Address, id string, thread conversation.Address, r conversation.Reply) db.TranscriptMessage {
	m := conversation.TranscriptEntry(at, id, r)
	b, err := json.Marshal(webBody{Body: conversation.Body{Text: r.Text, Buttons: r.Buttons}, Thread: thread.ThreadID})
	if err != nil {
		panic("web: encode a thread's root: " + err.Error()) // spans and buttons are strings and ints
	}
	m.Body = b
	return m
}

// webBody is a transcript body as the web chat reads it: the reply's, and for a message that
// opens a run's thread, the thread's id.
type webBody struct {
	conversation.Body
	Thread string `json:"thread,omitempty"`
}

// decode reads a row's body; a row without a readable one renders as conversation.DecodeBody says.
func decode(m db.TranscriptMessage) webBody {
	var b webBody
	if len(m.Body) == 0 || json.Unmarshal(m.Body, &b) != nil {
		return webBody{Body: conversation.DecodeBody(m)}
	}
	return b
}

// Said records what a web user typed in their conversation, so the chat page reads like a chat.
// It is not a reply and goes to no platform.
func (o *Outbox) Said(ctx context.Context, to conversation.Address, user, text string) error {
	m := conversation.TranscriptEntry(to, newMessageID(), conversation.Reply{Text: conversation.T(conversation.U(text))})
	m.From = user
	if _, err := o.store.AppendMessage(ctx, m); err != nil {
		return fmt.Errorf("web: record what %s typed: %w", user, err)
	}
	return nil
}

// Messages returns the newest messages of a conversation that user may see, oldest first.
func (o *Outbox) Messages(ctx context.Context, conversationID, user string) ([]ChatMessage, error) {
	return o.messages(ctx, conversationID, user, keepMessages)
}

// Threads returns the newest run threads of the chat page, newest first: the root message of each.
func (o *Outbox) Threads(ctx context.Context, user string) ([]ChatMessage, error) {
	msgs, err := o.messages(ctx, threadsIndex.ConversationID(), user, threadsShown)
	slices.Reverse(msgs)
	return msgs, err
}

// messages returns the newest limit messages of a conversation that user may see, oldest first.
func (o *Outbox) messages(ctx context.Context, conversationID, user string, limit int) ([]ChatMessage, error) {
	rows, err := o.store.Transcript(ctx, conversationID, limit)
	if err != nil {
		return nil, err
	}
	out := make([]ChatMessage, 0, len(rows))
	for _, m := range rows {
		if m.ToUser != "" && m.ToUser != user {
			continue
		}
		body := decode(m)
		out = append(out, ChatMessage{ID: m.MessageID, HTML: Render(body.Text), Buttons: body.Buttons, From: m.From, Mine: m.From != "" && m.From == user,
			ToUser: m.ToUser, Thread: body.Thread, RunID: m.RunID, At: m.PostedAt, Edited: m.Edited()})
	}
	return out, nil
}

// Changed returns a channel closed when the conversation may have changed, on any replica.
func (o *Outbox) Changed(conversationID string) <-chan struct{} {
	return o.store.TranscriptChanged(conversationID)
}

func newMessageID() string { return db.NewToken()[:messageIDBytes] }

// messageID is the id a reply keyed key gets: the hash of its only chunk's key (the web shows a
// reply as one message), so every replica derives the same id; a fresh random one when unkeyed.
func messageID(key string) string {
	if key == "" {
		return newMessageID()
	}
	sum := sha256.Sum256([]byte(conversation.ChunkKey(key, 0)))
	return hex.EncodeToString(sum[:])[:messageIDBytes]
}

// kick tells the live-update poller that something happened, so run pages refresh at once
// instead of at the next poll. It is set before the Outbox is shared and never changed.
func (o *Outbox) kick() {
	if o.onPost != nil {
		o.onPost()
	}
}

func check(ctx context.Context, to conversation.Address) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("web: %w", err)
	}
	if to.Platform != Platform {
		return fmt.Errorf("%w: platform %q", ErrWrongPlatform, to.Platform)
	}
	return nil
}
