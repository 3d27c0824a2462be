package slack

import (
	"context"
	"errors"
	"fmt"
	"strings"

	slackapi "github.com/slack-go/slack"

	"threadflow/conversation"
	"threadflow/platform"
)

// Direct messages and mentions (conversation.Messenger): a gate's approvers are told in a DM with
// a permalink to the gate's message, or mentioned in it.

var _ conversation.Messenger = (*outbox)(nil)

// noDMCodes are the errors of conversations.open and chat.postMessage that say this person cannot
// get a DM from the bot: they are skipped and named, and the others still told.
var noDMCodes = map[string]bool{"user_disabled": true, "user_not_found": true, "cannot_dm_bot": true,
	"not_allowed_to_dm": true, "messages_tab_disabled": true}

// mention renders a mention of a Slack user (<@U…>) or user group (<!subteam^S…>) that a workflow
// names; anything else (another platform's id, a malformed one) is shown as inert text.
func mention(id string) string {
	if _, group, ok := platform.SplitGroup(id); ok && strings.HasPrefix(id, Platform+":") && slackID(group) {
		return "<!subteam^" + group + ">"
	}
	if user, ok := strings.CutPrefix(id, Platform+":"); ok && slackID(user) {
		return "<@" + user + ">"
	}
	return breakFences(escape(id))
}

// slackID reports whether s is shaped like a Slack id: capital letters and digits only, so it can
// never close the mention it is put in.
func slackID(s string) bool {
	if s == "" || len(s) > 32 {
		return false
	}
	for _, r := range s {
		if (r < 'A' || r > 'Z') && (r < '0' || r > '9') {
			return false
		}
	}
	return true
}

// Members lists a user group's members through the adapter's cache (GroupCacheTTL).
func (o *outbox) Members(ctx context.Context, _ conversation.Address, group string, limit int) ([]string, bool, error) {
	name, id, ok := platform.SplitGroup(group)
	if !ok || name != Platform || o.members == nil {
		return nil, false, fmt.Errorf("slack: %q is not a Slack user group", group)
	}
	ids, err := o.members(ctx, id)
	if err != nil {
		return nil, false, err
	}
	if len(ids) > limit {
		return ids[:limit], true, nil
	}
	return ids, false, nil
}

// PostDirect opens (or finds) the DM with user with conversations.open and posts r there.
func (o *outbox) PostDirect(ctx context.Context, user string, r conversation.Reply) (conversation.Ref, error) {
	id, ok := strings.CutPrefix(user, Platform+":")
	if !ok || !slackID(id) {
		return conversation.Ref{}, fmt.Errorf("%w: %q is not a Slack user id", conversation.ErrRefused, user)
	}
	var ch *slackapi.Channel
	err := o.send.do(ctx, "conversations.open", id, func(ctx context.Context) error {
		var err error
		ch, _, _, err = o.api.OpenConversationContext(ctx, &slackapi.OpenConversationParameters{Users: []string{id}})
		return err
	})
	if err != nil {
		return conversation.Ref{}, noDM(err)
	}
	ref, err := o.Post(ctx, conversation.Address{Platform: Platform, ChannelID: ch.ID}, r)
	return ref, noDM(err)
}

// noDM marks err as the person taking no DMs, when Slack says so.
func noDM(err error) error {
	var se slackapi.SlackErrorResponse
	if errors.As(err, &se) && noDMCodes[se.Err] {
		return fmt.Errorf("%w: %w", conversation.ErrNoDM, err)
	}
	return err
}

// Link is the message's permalink (chat.getPermalink): it opens the message, in its thread.
func (o *outbox) Link(ctx context.Context, ref conversation.Ref) (string, error) {
	var link string
	err := o.send.read(ctx, "chat.getPermalink", ref.ChannelID, func(ctx context.Context) error {
		var err error
		link, err = o.api.GetPermalinkContext(ctx, &slackapi.PermalinkParameters{Channel: ref.ChannelID, Ts: ref.MessageID})
		return err
	})
	return link, err
}
