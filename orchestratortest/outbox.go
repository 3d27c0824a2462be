package orchestratortest

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"threadflow/conversation"
)

// Posted is one message the bot sent, as it reads now (after any edit).
type Posted struct {
	To      conversation.Address
	ID      string
	Text    string
	Buttons []conversation.Button
	Edited  bool
	Key     string // the reply's idempotency key, if it had one
}

// Outbox records what the bot sends, as a chat platform with threads and buttons shows it. With
// Err set it refuses every post and edit, as a platform that is down. Like every adapter, it
// posts a keyed reply once: the same key posted again to the same place returns the first ref.
type Outbox struct {
	Name string // its platform; empty: console
	Err  error

	mu   sync.Mutex
	msgs []Posted
}

// Platform implements conversation.Outbox.
func (o *Outbox) Platform() string {
	if o.Name == "" {
		return "console"
	}
	return o.Name
}

// Post implements conversation.Outbox; messages are numbered m1, m2...
func (o *Outbox) Post(_ context.Context, to conversation.Address, r conversation.Reply) (conversation.Ref, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.Err != nil {
		return conversation.Ref{}, o.Err
	}
	for _, m := range o.msgs {
		if r.Key != "" && m.Key == r.Key && m.To == to {
			return conversation.Ref{Address: to, MessageID: m.ID}, nil
		}
	}
	id := fmt.Sprintf("m%d", len(o.msgs)+1)
	o.msgs = append(o.msgs, Posted{To: to, ID: id, Text: r.Text.String(), Buttons: r.Buttons, Key: r.Key})
	return conversation.Ref{Address: to, MessageID: id}, nil
}

// Edit implements conversation.Outbox.
func (o *Outbox) Edit(_ context.Context, ref conversation.Ref, r conversation.Reply) error {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.Err != nil {
		return o.Err
	}
	for i := range o.msgs {
		if o.msgs[i].ID == ref.MessageID {
			o.msgs[i].Text, o.msgs[i].Buttons, o.msgs[i].Edited = r.Text.String(), r.Buttons, true
		}
	}
	return nil
}

// StartThread implements conversation.Outbox: the thread is named after its first message.
func (o *Outbox) StartThread(ctx context.Context, in conversation.Address, r conversation.Reply) (conversation.Address, conversation.Ref, error) {
	ref, err := o.Post(ctx, in.Channel(), r)
	if err != nil {
		return conversation.Address{}, conversation.Ref{}, err
	}
	thread := conversation.Address{Platform: in.Platform, ChannelID: in.ChannelID, ThreadID: ref.MessageID}
	return thread, ref, nil
}

// Count is how many messages were posted.
func (o *Outbox) Count() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	return len(o.msgs)
}

// Since returns the messages posted after the first n.
func (o *Outbox) Since(n int) []Posted {
	o.mu.Lock()
	defer o.mu.Unlock()
	return append([]Posted(nil), o.msgs[n:]...)
}

// Find returns the messages whose text contains s.
func (o *Outbox) Find(s string) []Posted {
	o.mu.Lock()
	defer o.mu.Unlock()
	var out []Posted
	for _, m := range o.msgs {
		if strings.Contains(m.Text, s) {
			out = append(out, m)
		}
	}
	return out
}

// ByID returns the current state of one message.
func (o *Outbox) ByID(id string) Posted {
	o.mu.Lock()
	defer o.mu.Unlock()
	for _, m := range o.msgs {
		if m.ID == id {
			return m
		}
	}
	return Posted{}
}

// Dump lists every message, for failure messages.
func (o *Outbox) Dump() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	var b strings.Builder
	for _, m := range o.msgs {
		fmt.Fprintf(&b, "[%s %s edited=%v] %s\n", m.ID, m.To.ConversationID(), m.Edited, m.Text)
	}
	return b.String()
}
