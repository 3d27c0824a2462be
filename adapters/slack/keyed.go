package slack

import (
	"context"
	"errors"
	"fmt"
	"time"

	slackapi "github.com/slack-go/slack"

	"threadflow/conversation"
)

// Keyed replies. chat.postMessage has no idempotency key, so every message of a keyed reply carries
// the key in its metadata (event_type threadflow_message, payload {"key", "chunk", "chunks"}), and
// the bot finds it again by reading the conversation with include_all_metadata:
// conversations.history for the top level of a channel (where a thread's root is),
// conversations.replies for a thread. Only the bot's own messages count: any app can attach
// metadata, and another app's must not make the bot skip a post.

// metadataType is the event_type of the metadata on the bot's keyed messages.
const metadataType = "threadflow_message"

// lookupPage is how many messages one read asks for (Slack allows up to 999 and 1,000; 200 is
// what it recommends).
const lookupPage = 200

// lookup bounds how much of a conversation a search for a keyed reply reads: the messages of the
// last window, at most pages reads of lookupPage messages.
type lookup struct {
	window time.Duration
	pages  int
}

var (
	// repostLookup is what Post and StartThread read before posting a keyed reply, and before
	// retrying a keyed message whose last attempt may have reached Slack: one read of the last
	// hour, so a repeat soon after (a restarted bot, a lost answer) posts nothing twice at the
	// cost of one read per keyed reply.
	repostLookup = lookup{window: time.Hour, pages: 1}
	// findLookup is what Find and FindThread read: a week, at most 1,000 messages.
	findLookup = lookup{window: 7 * 24 * time.Hour, pages: 5}
)

// metadata is what message i of the n messages of the reply keyed key carries.
func metadata(key string, i, n int) slackapi.MsgOption {
	return slackapi.MsgOptionMetadata(slackapi.SlackMetadata{EventType: metadataType,
		EventPayload: map[string]any{"key": key, "chunk": i, "chunks": n}})
}

// found is what a lookup saw of one keyed reply: the ts of each of its messages, by index, and how
// many messages the reply has (0 when none was seen).
type found struct {
	ts     map[int]string
	chunks int
}

func (f found) complete() bool { return f.chunks > 0 && len(f.ts) == f.chunks }

// add merges what another read saw of the same reply.
func (f *found) add(g found) {
	for i, ts := range g.ts {
		f.ts[i] = ts
	}
	f.chunks = max(f.chunks, g.chunks)
}

// chunkOf reads m's metadata: which of the n messages of the reply keyed key m is.
func chunkOf(m slackapi.Message, key string) (i, n int, ok bool) {
	md := m.Metadata
	if md.EventType != metadataType || md.EventPayload["key"] != key {
		return 0, 0, false
	}
	i, iok := count(md.EventPayload["chunk"])
	n, nok := count(md.EventPayload["chunks"])
	return i, n, iok && nok && i < n
}

// count reads a JSON number that must be a non-negative integer.
func count(v any) (int, bool) {
	f, ok := v.(float64)
	if !ok || f < 0 || f != float64(int(f)) {
		return 0, false
	}
	return int(f), true
}

// posted looks for the messages of the reply keyed key that Post (or, with startThread,
// StartThread) put at to: for a thread start, the root in the channel and the rest in its thread.
func (o *outbox) posted(ctx context.Context, to conversation.Address, key string, startThread bool, b lookup) (found, error) {
	if !startThread {
		return o.scan(ctx, to, key, b)
	}
	f, err := o.scan(ctx, to.Channel(), key, b)
	root, ok := f.ts[0]
	if err != nil || !ok || f.chunks <= 1 {
		return f, err
	}
	rest, err := o.scan(ctx, conversation.Address{Platform: Platform, ChannelID: to.ChannelID, ThreadID: root}, key, b)
	f.add(rest)
	return f, err
}

// scan reads the conversation at (a thread, or a channel's top level) newest pages first within
// b, and collects the bot's messages of the reply keyed key. It stops as soon as it has them all.
func (o *outbox) scan(ctx context.Context, at conversation.Address, key string, b lookup) (found, error) {
	f := found{ts: map[int]string{}}
	self, err := o.self(ctx)
	if err != nil {
		return f, err
	}
	oldest := time.Now().Add(-b.window)
	cursor := ""
	for range b.pages {
		msgs, next, err := o.read(ctx, at, oldest, cursor)
		if err != nil {
			return f, err
		}
		for _, m := range msgs {
			if i, n, ok := chunkOf(m, key); ok && m.User == self {
				f.ts[i], f.chunks = m.Timestamp, n
			}
		}
		if f.complete() || next == "" {
			break
		}
		cursor = next
	}
	return f, nil
}

// read returns one page of the messages at, with their metadata, and the cursor of the next page
// ("" after the last). A thread Slack does not know has no messages.
func (o *outbox) read(ctx context.Context, at conversation.Address, oldest time.Time, cursor string) ([]slackapi.Message, string, error) {
	since := fmt.Sprintf("%d.%06d", oldest.Unix(), oldest.Nanosecond()/1e3)
	var (
		msgs []slackapi.Message
		next string
	)
	if at.ThreadID == "" {
		err := o.send.read(ctx, "conversations.history", at.ChannelID, func(ctx context.Context) error {
			res, err := o.api.GetConversationHistoryContext(ctx, &slackapi.GetConversationHistoryParameters{ChannelID: at.ChannelID,
				Oldest: since, Limit: lookupPage, Cursor: cursor, IncludeAllMetadata: true})
			if err == nil {
				msgs, next = res.Messages, res.ResponseMetaData.NextCursor
			}
			return err
		})
		return msgs, next, err
	}
	err := o.send.read(ctx, "conversations.replies", at.ChannelID, func(ctx context.Context) error {
		var err error
		msgs, _, next, err = o.api.GetConversationRepliesContext(ctx, &slackapi.GetConversationRepliesParameters{ChannelID: at.ChannelID,
			Timestamp: at.ThreadID, Oldest: since, Limit: lookupPage, Cursor: cursor, IncludeAllMetadata: true})
		return err
	})
	var se slackapi.SlackErrorResponse
	if errors.As(err, &se) && se.Err == "thread_not_found" {
		return nil, "", nil
	}
	return msgs, next, err
}

// self returns the bot's user id, asked of auth.test once: lookups trust the bot's messages only.
func (o *outbox) self(ctx context.Context) (string, error) {
	o.selfMu.Lock()
	defer o.selfMu.Unlock()
	if o.selfID == "" {
		auth, err := o.api.AuthTestContext(ctx)
		if err != nil {
			return "", fmt.Errorf("slack: auth.test, to tell the bot's own messages: %w", err)
		}
		o.selfID = auth.UserID
	}
	return o.selfID, nil
}

// Find reports whether every message of the reply keyed key is at to (a channel, or a thread) among
// the messages of the last week (at most 1,000), and returns the last one's Ref.
func (o *outbox) Find(ctx context.Context, to conversation.Address, key string) (conversation.Ref, bool, error) {
	if to.ChannelID == "" {
		return conversation.Ref{}, false, ErrNoChannel
	}
	if err := conversation.CheckFind(key); err != nil {
		return conversation.Ref{}, false, fmt.Errorf("slack: %w", err)
	}
	f, err := o.posted(ctx, to, key, false, findLookup)
	if err != nil || !f.complete() {
		return conversation.Ref{}, false, err
	}
	return conversation.Ref{Address: to, MessageID: f.ts[f.chunks-1]}, true, nil
}

// FindThread reports whether StartThread posted the reply keyed key in the channel of in, within
// the same bounds as Find, and returns the thread it opened and the Ref StartThread returned.
func (o *outbox) FindThread(ctx context.Context, in conversation.Address, key string) (conversation.Address, conversation.Ref, bool, error) {
	if in.ChannelID == "" {
		return conversation.Address{}, conversation.Ref{}, false, ErrNoChannel
	}
	if err := conversation.CheckFind(key); err != nil {
		return conversation.Address{}, conversation.Ref{}, false, fmt.Errorf("slack: %w", err)
	}
	channel := in.Channel()
	f, err := o.posted(ctx, channel, key, true, findLookup)
	if err != nil || !f.complete() {
		return conversation.Address{}, conversation.Ref{}, false, err
	}
	thread := conversation.Address{Platform: Platform, ChannelID: in.ChannelID, ThreadID: f.ts[0]}
	ref := conversation.Ref{Address: channel, MessageID: f.ts[0]} // a root alone: as postChunks returns it
	if f.chunks > 1 {
		ref = conversation.Ref{Address: thread, MessageID: f.ts[f.chunks-1]}
	}
	return thread, ref, true, nil
}
