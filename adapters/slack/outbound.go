package slack

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	slackapi "github.com/slack-go/slack"
	"go.uber.org/zap"

	"threadflow/conversation"
)

// Message size limits. Slack accepts long texts but folds anything past ~4,000 characters behind
// "show more" and rejects section blocks over 3,000, so text is cut below both.
const (
	chunkLimit   = 3500
	sectionLimit = 3000
	labelLimit   = 75 // Block Kit button label
)

// Outbound errors.
var (
	ErrEmptyReply  = errors.New("slack: the reply has neither text nor buttons")
	ErrNoRecipient = errors.New("slack: an ephemeral reply needs ToUser, a slack: user id")
	ErrNoChannel   = errors.New("slack: the address has no channel")
)

// outbox implements conversation.Outbox and conversation.Finder with the Web API and the bot
// token. It never uses a slash command's response_url: those expire after 30 minutes, and approval
// gates wait for days.
type outbox struct {
	api  *slackapi.Client
	send *sender
	log  *zap.Logger

	// members reads a user group's members (Adapter.GroupMembers, cached), for Members.
	members func(ctx context.Context, group string) ([]string, error)

	selfMu sync.Mutex
	selfID string // the bot's user id, once known (self)
}

var _ conversation.Finder = (*outbox)(nil)

func newOutbox(api *slackapi.Client, log *zap.Logger) *outbox {
	return &outbox{api: api, send: newSender(log), log: log}
}

func (o *outbox) Platform() string { return Platform }

// Capabilities: Slack does not accept slash commands typed in a thread ("/workflow is not
// supported in threads"), so hints there say to reply or click instead.
func (o *outbox) Capabilities() conversation.Capabilities {
	return conversation.Capabilities{Threads: true, Buttons: true}
}

// Post sends r, split into several messages when it is long; buttons go on the last one, whose
// Ref is returned so that a decision can be shown by editing it. A keyed reply posts only the
// messages that the conversation's last hour does not show already (keyed.go).
func (o *outbox) Post(ctx context.Context, to conversation.Address, r conversation.Reply) (conversation.Ref, error) {
	_, ref, err := o.postChunks(ctx, to, r, false)
	return ref, err
}

// StartThread posts r in the channel of in; its first message is the root of the new thread and
// any further chunks go into that thread.
func (o *outbox) StartThread(ctx context.Context, in conversation.Address, r conversation.Reply) (conversation.Address, conversation.Ref, error) {
	if r.Ephemeral {
		return conversation.Address{}, conversation.Ref{}, errors.New("slack: an ephemeral message cannot start a thread")
	}
	root, ref, err := o.postChunks(ctx, in.Channel(), r, true)
	if err != nil {
		return conversation.Address{}, ref, err
	}
	return conversation.Address{Platform: Platform, ChannelID: in.ChannelID, ThreadID: root}, ref, nil
}

// Edit replaces a posted message with chat.update. An edit is a single message, so a reply too
// long for one is cut and marked; blocks are always sent, so buttons disappear when r has none.
func (o *outbox) Edit(ctx context.Context, ref conversation.Ref, r conversation.Reply) error {
	if ref.ChannelID == "" || ref.MessageID == "" {
		return fmt.Errorf("slack: edit needs a channel and a message ts, got %q/%q", ref.ChannelID, ref.MessageID)
	}
	text, err := singleMessage(r)
	if err != nil {
		return err
	}
	opts := append(content(text, r.Buttons), slackapi.MsgOptionUpdate(ref.MessageID))
	if len(r.Buttons) == 0 {
		opts = append(opts, slackapi.MsgOptionBlocks()) // "blocks=[]": Slack keeps old blocks otherwise
	}
	return o.send.do(ctx, "chat.update", ref.ChannelID, func(ctx context.Context) error {
		_, _, _, err := o.api.SendMessageContext(ctx, ref.ChannelID, opts...)
		return err
	})
}

// postChunks posts each chunk of r to to; with startThread the first one becomes the thread root.
// It returns the ts of the first message and the Ref of the last. Of a keyed reply, the messages
// found posted already are not posted again.
func (o *outbox) postChunks(ctx context.Context, to conversation.Address, r conversation.Reply, startThread bool) (string, conversation.Ref, error) {
	if to.ChannelID == "" {
		return "", conversation.Ref{}, ErrNoChannel
	}
	if err := conversation.CheckKey(r); err != nil {
		return "", conversation.Ref{}, fmt.Errorf("slack: %w", err)
	}
	chunks, err := chunksFor(r)
	if err != nil {
		return "", conversation.Ref{}, err
	}
	var have found
	if r.Key != "" && !r.FirstAttempt {
		// A look that fails (a scope missing, Slack refusing reads) does not stop the post: a
		// message shown twice beats one never shown.
		if have, err = o.posted(ctx, to, r.Key, startThread, repostLookup); err != nil {
			o.log.Warn("slack.post_unchecked", zap.String("channel", to.ChannelID), zap.Error(err))
		}
	}
	var first string
	var ref conversation.Ref
	for i, c := range chunks {
		ts, ok := have.ts[i]
		if !ok {
			var buttons []conversation.Button
			if i == len(chunks)-1 {
				buttons = r.Buttons
			}
			opts := content(c, buttons)
			if r.Key != "" {
				opts = append(opts, metadata(r.Key, i, len(chunks)))
			}
			if ts, err = o.postOne(ctx, to, r, i, opts); err != nil {
				return first, ref, err
			}
		}
		ref = conversation.Ref{Address: to, MessageID: ts}
		if i == 0 {
			first = ts
			if startThread {
				to.ThreadID = ts
			}
		}
	}
	return first, ref, nil
}

// postOne posts message i of r to to. A keyed message is posted once: before trying again after a
// failure that may have hidden Slack's answer (a broken connection, a 5xx), it looks for the
// message first.
func (o *outbox) postOne(ctx context.Context, to conversation.Address, r conversation.Reply, i int, opts []slackapi.MsgOption) (string, error) {
	if to.ThreadID != "" {
		opts = append(opts, slackapi.MsgOptionTS(to.ThreadID))
	}
	if r.Ephemeral {
		user, ok := strings.CutPrefix(r.ToUser, Platform+":")
		if !ok || user == "" {
			return "", ErrNoRecipient
		}
		opts = append(opts, slackapi.MsgOptionPostEphemeral(user))
	} else {
		opts = append(opts, slackapi.MsgOptionPost())
	}
	var ts string
	tried := false
	err := o.send.do(ctx, "chat.post", to.ChannelID, func(ctx context.Context) error {
		if tried && r.Key != "" { // as above, a look that fails leaves the retry to post
			if f, err := o.scan(ctx, to, r.Key, repostLookup); err == nil && f.ts[i] != "" {
				ts = f.ts[i]
				return nil
			}
		}
		tried = true
		var err error
		_, ts, _, err = o.api.SendMessageContext(ctx, to.ChannelID, opts...)
		return err
	})
	return ts, err
}

// truncatedMark ends an edit whose text had to be cut.
const truncatedMark = "\n_(truncated)_"

// singleMessage renders r into one message's text, cut (fences kept balanced) when too long.
func singleMessage(r conversation.Reply) (string, error) {
	text := Render(r.Text)
	if strings.TrimSpace(text) == "" && len(r.Buttons) == 0 {
		return "", ErrEmptyReply
	}
	limit := chunkLimit
	if len(r.Buttons) > 0 {
		limit = sectionLimit
	}
	if len(text) <= limit {
		return text, nil
	}
	return conversation.Split(text, limit-len(truncatedMark))[0] + truncatedMark, nil
}

// chunksFor renders r and splits it. The chunk that carries buttons goes into a section block, so
// it is split again below the section limit when needed.
func chunksFor(r conversation.Reply) ([]string, error) {
	text := Render(r.Text)
	if strings.TrimSpace(text) == "" {
		if len(r.Buttons) == 0 {
			return nil, ErrEmptyReply
		}
		return []string{""}, nil
	}
	chunks := conversation.Split(text, chunkLimit)
	if last := chunks[len(chunks)-1]; len(r.Buttons) > 0 && len(last) > sectionLimit {
		chunks = append(chunks[:len(chunks)-1], conversation.Split(last, sectionLimit)...)
	}
	return chunks, nil
}
