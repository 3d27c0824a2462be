package discord

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/bwmarrin/discordgo"

	"threadflow/conversation"
	"threadflow/platform"
)

// Direct messages and mentions (conversation.Messenger): a gate's approvers are told in a DM with
// a link to the gate's message, or mentioned in it with allowed_mentions naming exactly them.

var _ conversation.Messenger = outbox{}

// Bounds of reading a role's members: List Guild Members pages of memberPage, at most
// maxMemberPages of them (a guild of 10,000 members); a role is found among the members read.
const (
	memberPage     = 1000
	maxMemberPages = 10
)

// codeNoDM is Discord's "Cannot send messages to this user": DMs closed to the bot.
const codeNoDM = 50007

// mention renders a mention of a Discord user (<@id>) or role (<@&id>) that a workflow names;
// anything else is shown as inert text.
func mention(id string) string {
	if name, role, ok := platform.SplitGroup(id); ok && name == Platform && isSnowflake(role) {
		return "<@&" + role + ">"
	}
	if user, ok := strings.CutPrefix(id, Platform+":"); ok && isSnowflake(user) {
		return "<@" + user + ">"
	}
	return neutralise(markdownEscaper.Replace(id))
}

// allowedMentions lets exactly the users and roles t mentions ping, and nothing else (no
// @everyone, no mention written in any other span).
func allowedMentions(t conversation.Text) *discordgo.MessageAllowedMentions {
	a := noMentions()
	for _, id := range t.Mentions() {
		if name, role, ok := platform.SplitGroup(id); ok && name == Platform && isSnowflake(role) {
			a.Roles = append(a.Roles, role)
		} else if user, ok := strings.CutPrefix(id, Platform+":"); ok && isSnowflake(user) {
			a.Users = append(a.Users, user)
		}
	}
	return a
}

// guildOf is the guild of a channel (or thread), read once and cached.
func (a *Adapter) guildOf(ctx context.Context, channelID string) (string, error) {
	if info, ok := a.channels.get(channelID); ok && info.guildID != "" {
		return info.guildID, nil
	}
	c, err := a.session.Channel(channelID, discordgo.WithContext(ctx))
	if err != nil {
		return "", fmt.Errorf("discord: look up channel %s: %w", channelID, redact(err))
	}
	if c.GuildID == "" {
		return "", fmt.Errorf("discord: channel %s is in no server", channelID)
	}
	info, _ := a.channels.get(channelID)
	info.guildID = c.GuildID
	a.channels.put(channelID, info)
	return c.GuildID, nil
}

// Members lists the members of a role of the server of in, reading List Guild Members (the
// application needs the Server Members privileged intent), at most limit of them.
func (o outbox) Members(ctx context.Context, in conversation.Address, group string, limit int) ([]string, bool, error) {
	name, role, ok := platform.SplitGroup(group)
	if !ok || name != Platform {
		return nil, false, fmt.Errorf("discord: %q is not a Discord role", group)
	}
	guild, err := o.a.guildOf(ctx, in.ChannelID)
	if err != nil {
		return nil, false, err
	}
	var out []string
	after := ""
	for page := 0; page < maxMemberPages; page++ {
		var ms []*discordgo.Member
		err := o.a.withRetry(ctx, "guild_members", in.ChannelID, func() error {
			var err error
			ms, err = o.a.session.GuildMembers(guild, after, memberPage, discordgo.WithContext(ctx))
			return err
		})
		if err != nil {
			return nil, false, fmt.Errorf("discord: members of role %s (the app needs the Server Members intent): %w", role, err)
		}
		for _, m := range ms {
			if m.User == nil {
				continue
			}
			after = m.User.ID
			if !hasRole(m.Roles, role) || (o.a.botID != "" && m.User.ID == o.a.botID) {
				continue
			}
			if len(out) == limit {
				return out, true, nil
			}
			out = append(out, Platform+":"+m.User.ID)
		}
		if len(ms) < memberPage {
			return out, false, nil
		}
	}
	return out, true, nil
}

func hasRole(roles []string, role string) bool {
	for _, r := range roles {
		if r == role {
			return true
		}
	}
	return false
}

// PostDirect opens the DM channel with user (Create DM) and posts r there; a user who closed DMs
// to the bot is conversation.ErrNoDM.
func (o outbox) PostDirect(ctx context.Context, user string, r conversation.Reply) (conversation.Ref, error) {
	id, ok := strings.CutPrefix(user, Platform+":")
	if !ok || !isSnowflake(id) {
		return conversation.Ref{}, fmt.Errorf("%w: %q is not a Discord user id", conversation.ErrRefused, user)
	}
	var ch *discordgo.Channel
	err := o.a.withRetry(ctx, "dm_open", id, func() error {
		var err error
		ch, err = o.a.session.UserChannelCreate(id, discordgo.WithContext(ctx))
		return err
	})
	if err != nil {
		return conversation.Ref{}, noDM(err)
	}
	o.a.channels.put(ch.ID, channelInfo{direct: true})
	r.Key, r.Ephemeral = "", false
	ref, err := o.Post(ctx, conversation.Address{Platform: Platform, ChannelID: ch.ID}, r)
	return ref, noDM(err)
}

// noDM marks err as the person taking no DMs from the bot, when Discord says so.
func noDM(err error) error {
	var rest *discordgo.RESTError
	if errors.As(err, &rest) && rest.Message != nil && rest.Message.Code == codeNoDM {
		return fmt.Errorf("%w: %w", conversation.ErrNoDM, err)
	}
	return err
}

// Link is the message's link, which opens it in its channel or thread.
func (o outbox) Link(ctx context.Context, ref conversation.Ref) (string, error) {
	guild, err := o.a.guildOf(ctx, ref.ChannelID)
	if err != nil {
		return "", err
	}
	return "https://discord.com/channels/" + guild + "/" + target(ref.Address) + "/" + ref.MessageID, nil
}
