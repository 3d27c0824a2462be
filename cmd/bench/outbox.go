package main

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"threadflow/conversation"
)

// outbox is the bench's chat platform: it posts nowhere, and tells a waiter the moment the first
// reply reaches a channel. It keeps no state per message, so it adds nothing to memory figures.
type outbox struct {
	mu      sync.Mutex
	waiters map[string]chan time.Time // channel id -> when its first reply came
	ids     atomic.Int64
}

func newOutbox() *outbox { return &outbox{waiters: map[string]chan time.Time{}} }

func (o *outbox) Platform() string { return benchPlatform }

// expect registers interest in the next reply to channel.
func (o *outbox) expect(channel string) <-chan time.Time {
	ch := make(chan time.Time, 1)
	o.mu.Lock()
	o.waiters[channel] = ch
	o.mu.Unlock()
	return ch
}

func (o *outbox) replied(a conversation.Address) {
	now := time.Now()
	o.mu.Lock()
	defer o.mu.Unlock()
	if ch := o.waiters[a.ChannelID]; ch != nil {
		ch <- now
		delete(o.waiters, a.ChannelID)
	}
}

func (o *outbox) ref(a conversation.Address) conversation.Ref {
	return conversation.Ref{Address: a, MessageID: strconv.FormatInt(o.ids.Add(1), 10)}
}

func (o *outbox) Post(_ context.Context, to conversation.Address, _ conversation.Reply) (conversation.Ref, error) {
	o.replied(to)
	return o.ref(to), nil
}

func (o *outbox) Edit(context.Context, conversation.Ref, conversation.Reply) error { return nil }

func (o *outbox) StartThread(_ context.Context, in conversation.Address, _ conversation.Reply) (conversation.Address, conversation.Ref, error) {
	o.replied(in)
	ref := o.ref(in)
	at := conversation.Address{Platform: in.Platform, ChannelID: in.ChannelID, ThreadID: "t" + ref.MessageID}
	return at, conversation.Ref{Address: at, MessageID: ref.MessageID}, nil
}
