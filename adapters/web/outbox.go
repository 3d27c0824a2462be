package web

import (
	"context"
	"errors"
	"fmt"
	"html/template"
	"strconv"
	"sync"
	"time"

	"threadflow/conversation"
)

// Errors returned by the Outbox.
var (
	ErrWrongPlatform  = errors.New("web: address is not a web address")
	ErrUnknownMessage = errors.New("web: no such message")
)

// Bounds of what the Outbox keeps in memory: the chat page shows recent messages, not an archive
// (runs themselves are in the database and on the dashboard).
const (
	keepMessages      = 200 // per conversation
	keepConversations = 256 // least recently used beyond this are forgotten
)

// ChatMessage is one message the bot posted to a web conversation.
type ChatMessage struct {
	ID      string
	Thread  string
	HTML    template.HTML
	Buttons []conversation.Button
	From    string // the web user who typed it; empty for the bot's messages
	ToUser  string // set for ephemeral replies: shown to that user only
	At      time.Time
	Edited  bool
}

// Outbox keeps the bot's replies to web conversations in memory and wakes the pages showing them.
// It implements conversation.Outbox and is safe for concurrent use.
type Outbox struct {
	now func() time.Time

	mu      sync.Mutex
	last    int
	convs   map[string]*chatLog // conversation id -> messages
	changed chan struct{}       // closed and replaced on every change: a broadcast to waiting pages
	onPost  func()              // called after every change, outside mu; set once by New
}

type chatLog struct {
	msgs []ChatMessage
	used int // o.last when last touched, for least-recently-used eviction
}

var _ conversation.Outbox = (*Outbox)(nil)

// NewOutbox returns an empty Outbox.
func NewOutbox(now func() time.Time) *Outbox {
	if now == nil {
		now = time.Now
	}
	return &Outbox{now: now, convs: map[string]*chatLog{}, changed: make(chan struct{})}
}

// Platform returns "web".
func (o *Outbox) Platform() string { return Platform }

// Capabilities: the chat page is one conversation per user without threads; its buttons click.
func (o *Outbox) Capabilities() conversation.Capabilities {
	return conversation.Capabilities{Buttons: true, CommandsInThreads: true}
}

// Post appends r to the conversation of to.
func (o *Outbox) Post(ctx context.Context, to conversation.Address, r conversation.Reply) (conversation.Ref, error) {
	if err := check(ctx, to); err != nil {
		return conversation.Ref{}, err
	}
	o.mu.Lock()
	o.last++
	id := strconv.Itoa(o.last)
	msg := ChatMessage{ID: id, Thread: to.ThreadID, HTML: Render(r.Text), Buttons: r.Buttons, At: o.now()}
	if r.Ephemeral {
		msg.ToUser = r.ToUser
	}
	o.append(to.Channel().ConversationID(), msg)
	o.bump()
	o.mu.Unlock()
	o.kick()
	return conversation.Ref{Address: to, MessageID: id}, nil
}

// Edit replaces a posted message's content and buttons.
func (o *Outbox) Edit(ctx context.Context, ref conversation.Ref, r conversation.Reply) error {
	if err := check(ctx, ref.Address); err != nil {
		return err
	}
	if !o.replace(ref, r) {
		return fmt.Errorf("%w: edit of message %q", ErrUnknownMessage, ref.MessageID)
	}
	o.kick()
	return nil
}

// replace swaps a message's content, reporting whether it was found.
func (o *Outbox) replace(ref conversation.Ref, r conversation.Reply) bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	l := o.convs[ref.Channel().ConversationID()]
	for i := range logMessages(l) {
		if m := &l.msgs[i]; m.ID == ref.MessageID {
			m.HTML, m.Buttons, m.Edited = Render(r.Text), r.Buttons, true
			o.bump()
			return true
		}
	}
	return false
}

// StartThread posts r and returns in itself: the chat page has no threads, so a run reports in the
// conversation it was started from and answers typed there reach its gate, as in the terminal.
func (o *Outbox) StartThread(ctx context.Context, in conversation.Address, r conversation.Reply) (conversation.Address, conversation.Ref, error) {
	ref, err := o.Post(ctx, in, r)
	if err != nil {
		return conversation.Address{}, conversation.Ref{}, err
	}
	return in, ref, nil
}

// Said shows what a web user typed in their conversation, so the chat page reads like a chat. It
// is not a reply and goes to no platform.
func (o *Outbox) Said(to conversation.Address, user, text string) {
	o.mu.Lock()
	o.last++
	o.append(to.Channel().ConversationID(), ChatMessage{ID: strconv.Itoa(o.last), From: user, HTML: Render(conversation.T(conversation.U(text))), At: o.now()})
	o.bump()
	o.mu.Unlock()
}

// Messages returns a copy of the messages of a conversation that user may see, oldest first, and
// a channel closed at the next change.
func (o *Outbox) Messages(conversationID, user string) ([]ChatMessage, <-chan struct{}) {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []ChatMessage
	for _, m := range logMessages(o.convs[conversationID]) {
		if m.ToUser == "" || m.ToUser == user {
			out = append(out, m)
		}
	}
	return out, o.changed
}

func logMessages(l *chatLog) []ChatMessage {
	if l == nil {
		return nil
	}
	return l.msgs
}

// append adds msg to a conversation, trimming it and evicting the least recently used
// conversation when there are too many; the caller holds mu.
func (o *Outbox) append(conv string, msg ChatMessage) {
	l := o.convs[conv]
	if l == nil {
		if len(o.convs) >= keepConversations {
			o.evictOldest()
		}
		l = &chatLog{}
		o.convs[conv] = l
	}
	l.msgs = append(l.msgs, msg)
	if len(l.msgs) > keepMessages {
		l.msgs = append([]ChatMessage(nil), l.msgs[len(l.msgs)-keepMessages:]...)
	}
	l.used = o.last
}

func (o *Outbox) evictOldest() {
	oldest, used := "", -1
	for id, l := range o.convs {
		if used < 0 || l.used < used {
			oldest, used = id, l.used
		}
	}
	delete(o.convs, oldest)
}

// bump wakes every page waiting on the current change channel; the caller holds mu.
func (o *Outbox) bump() {
	close(o.changed)
	o.changed = make(chan struct{})
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
