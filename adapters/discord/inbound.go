package discord

import (
	"context"
	"fmt"
	"strings"

	"github.com/bwmarrin/discordgo"
	"go.uber.org/zap"

	"threadflow/conversation"
)

// onMessage routes a message that is meant for the bot: one that mentions it, a DM, or any message
// in a thread (the orchestrator decides whether the thread is a run's). Everything else, and every
// message written by a bot, including this one, is ignored without claiming it.
func (a *Adapter) onMessage(ctx context.Context, m *discordgo.Message) {
	if m.Author == nil || m.Author.Bot || m.Author.ID == a.botID {
		a.log.Debug("discord.message_ignored", zap.String("reason", "bot"), zap.String("channel", m.ChannelID))
		return
	}
	direct := m.GuildID == ""
	text, mentioned := stripMention(m.Content, a.botID)
	addr, err := a.resolve(ctx, m.ChannelID, direct)
	if err != nil {
		a.log.Warn("discord.channel_lookup_failed", zap.String("channel", m.ChannelID), errField(err))
		return
	}
	if !mentioned && !direct && addr.ThreadID == "" {
		a.log.Debug("discord.message_ignored", zap.String("reason", "not_addressed"), zap.String("channel", m.ChannelID))
		return
	}
	msg := conversation.Message{
		Address: addr, UserID: Platform + ":" + m.Author.ID, UserName: displayName(m.Member, m.Author), UserRoles: roles(m.Member),
		Text: text, EventID: m.ID, Mentioned: mentioned, Direct: direct,
	}
	if a.claimMessage(ctx, msg) {
		a.handler.Handle(ctx, msg)
	}
}

// stripMention removes the bot's mentions (<@id> and the legacy <@!id>) from content and reports
// whether there was one.
func stripMention(content, botID string) (string, bool) {
	out := content
	for _, tag := range []string{"<@" + botID + ">", "<@!" + botID + ">"} {
		out = strings.ReplaceAll(out, tag, "")
	}
	return strings.TrimSpace(out), out != content
}

// resolve returns the Address of a channel: a thread is addressed as its parent channel with
// ThreadID set, so a run's thread and the channel it started in share the parent conversation.
func (a *Adapter) resolve(ctx context.Context, channelID string, direct bool) (conversation.Address, error) {
	addr := conversation.Address{Platform: Platform, ChannelID: channelID}
	if direct {
		return addr, nil
	}
	info, err := a.channel(ctx, channelID)
	if err != nil {
		return addr, err
	}
	if info.parentID != "" {
		addr.ChannelID, addr.ThreadID = info.parentID, channelID
	}
	return addr, nil
}

// channel returns what the adapter knows of a channel, asking Discord once per channel.
func (a *Adapter) channel(ctx context.Context, id string) (channelInfo, error) {
	if info, ok := a.channels.get(id); ok {
		return info, nil
	}
	c, err := a.session.Channel(id, discordgo.WithContext(ctx))
	if err != nil {
		return channelInfo{}, fmt.Errorf("discord: look up channel %s: %w", id, err)
	}
	info := channelInfo{direct: c.Type == discordgo.ChannelTypeDM || c.Type == discordgo.ChannelTypeGroupDM, guildID: c.GuildID}
	if c.IsThread() {
		info.parentID = c.ParentID
	}
	a.channels.put(id, info)
	return info, nil
}

// onInteraction hands an interaction to its kind's handler, each of which claims it first; only the
// claimant answers, so the others do nothing at all, not even the acknowledgement. A command or a
// click is claimed with the message it becomes, kept until it is handled.
func (a *Adapter) onInteraction(ctx context.Context, in *discordgo.Interaction) {
	switch in.Type {
	case discordgo.InteractionApplicationCommand:
		a.onCommand(ctx, in)
	case discordgo.InteractionApplicationCommandAutocomplete:
		if a.claim(ctx, in.ID) {
			a.onAutocomplete(ctx, in)
		}
	case discordgo.InteractionMessageComponent:
		a.onClick(ctx, in)
	}
}

// interactionUser returns the id and display name of whoever triggered the interaction: a member
// in a guild, a user in a DM.
func interactionUser(in *discordgo.Interaction) (id, name string) {
	switch {
	case in.Member != nil && in.Member.User != nil:
		return in.Member.User.ID, displayName(in.Member, in.Member.User)
	case in.User != nil:
		return in.User.ID, displayName(nil, in.User)
	}
	return "", ""
}

// roles are the member's role ids as Discord sent them with this message or interaction; nil in a
// DM or when it sent none. They answer `discord:role:<id>` in lists of people when the person acts.
func roles(member *discordgo.Member) []string {
	if member == nil || len(member.Roles) == 0 {
		return nil
	}
	return member.Roles
}

// displayName is the name Discord itself shows for a person: their nickname in the guild, else
// their global display name, else their username. The member of a message event carries no user,
// so discordgo's Member.DisplayName (which reads it) is not used. The orchestrator bounds and
// escapes the name (conversation.Person).
func displayName(member *discordgo.Member, user *discordgo.User) string {
	if member != nil && member.Nick != "" {
		return member.Nick
	}
	if user == nil {
		return ""
	}
	return user.DisplayName()
}

// respond sends the interaction's one callback. Discord allows 3 s for it, hence no retry.
func (a *Adapter) respond(ctx context.Context, in *discordgo.Interaction, r *discordgo.InteractionResponse) bool {
	if err := a.session.InteractionRespond(in, r, discordgo.WithContext(ctx)); err != nil {
		a.log.Error("discord.interaction_respond_failed", zap.String("interaction", in.ID), errField(err))
		return false
	}
	return true
}

// onCommand claims the command with the message it becomes, defers the answer at once, hands the
// message to the handler, then replaces the "thinking" placeholder with the command that ran. The
// handler's replies are posted in the channel or thread through the Outbox. A command the adapter
// cannot read is claimed alone and answered with why.
func (a *Adapter) onCommand(ctx context.Context, in *discordgo.Interaction) {
	received := a.now()
	text, err := commandText(in.ApplicationCommandData())
	if err != nil {
		a.refuse(ctx, in, conversation.T(conversation.P(err.Error())))
		return
	}
	addr, err := a.resolve(ctx, in.ChannelID, in.GuildID == "")
	if err != nil {
		a.log.Warn("discord.channel_lookup_failed", zap.String("channel", in.ChannelID), errField(err))
		a.refuse(ctx, in, conversation.T(conversation.P("Sorry, I could not read this channel; check my View Channels permission.")))
		return
	}
	userID, name := interactionUser(in)
	m := conversation.Message{
		Address: addr, UserID: Platform + ":" + userID, UserName: name, UserRoles: roles(in.Member), Text: text,
		EventID: in.ID, Mentioned: true, Direct: in.GuildID == "",
	}
	if a.openForm(ctx, in, m) { // a modal must be the interaction's first answer
		return
	}
	if !a.claimMessage(ctx, m) {
		return
	}
	// The request is kept: it is handled even if Discord no longer takes the acknowledgement.
	deferred := a.respond(ctx, in, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredChannelMessageWithSource})
	if deferred {
		a.tokens.remember(addr, m.UserID, interactionToken{appID: in.AppID, token: in.Token, at: received})
	}
	a.handler.Handle(ctx, m)
	if deferred && a.now().Sub(received) < tokenLifetime {
		a.finish(ctx, in, conversation.T(conversation.C(text)))
	}
}

// refuse claims a command the adapter cannot hand on and answers it with t.
func (a *Adapter) refuse(ctx context.Context, in *discordgo.Interaction, t conversation.Text) {
	if !a.claim(ctx, in.ID) {
		return
	}
	if a.respond(ctx, in, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredChannelMessageWithSource}) {
		a.finish(ctx, in, t)
	}
}

// finish edits the deferred response so Discord stops showing "thinking".
func (a *Adapter) finish(ctx context.Context, in *discordgo.Interaction, t conversation.Text) {
	content := Render(t)
	edit := &discordgo.WebhookEdit{Content: &content, AllowedMentions: noMentions()}
	if _, err := a.session.InteractionResponseEdit(in, edit, discordgo.WithContext(ctx)); err != nil {
		a.log.Warn("discord.interaction_finish_failed", zap.String("interaction", in.ID), errField(err))
	}
}

// onClick turns a button click into the button's command, claimed with that message and
// acknowledged with a deferred update so the message stays as it is until the handler edits it. The
// click's token is kept like a command's, so an answer meant only for the clicker (a refusal) is an
// ephemeral followup, not a message to all.
func (a *Adapter) onClick(ctx context.Context, in *discordgo.Interaction) {
	received := a.now()
	cmd, ok := a.buttons.command(in.MessageComponentData().CustomID)
	if !ok || in.Message == nil {
		if a.claim(ctx, in.ID) {
			a.respond(ctx, in, ephemeral("This button has expired. Type the command shown in the message instead."))
		}
		return
	}
	addr, err := a.resolve(ctx, in.ChannelID, in.GuildID == "")
	if err != nil {
		a.log.Warn("discord.channel_lookup_failed", zap.String("channel", in.ChannelID), errField(err))
		if a.claim(ctx, in.ID) {
			a.respond(ctx, in, ephemeral("Sorry, I could not read this channel; check my View Channels permission."))
		}
		return
	}
	userID, name := interactionUser(in)
	m := conversation.Message{
		Address: addr, UserID: Platform + ":" + userID, UserName: name, UserRoles: roles(in.Member), Text: cmd, EventID: in.ID,
		Direct: in.GuildID == "", Action: &conversation.Action{Ref: conversation.Ref{Address: addr, MessageID: in.Message.ID}},
	}
	if !a.claimMessage(ctx, m) {
		return
	}
	if a.respond(ctx, in, &discordgo.InteractionResponse{Type: discordgo.InteractionResponseDeferredMessageUpdate}) {
		a.tokens.remember(addr, m.UserID, interactionToken{appID: in.AppID, token: in.Token, at: received})
	}
	a.handler.Handle(ctx, m)
}

func ephemeral(text string) *discordgo.InteractionResponse {
	return &discordgo.InteractionResponse{
		Type: discordgo.InteractionResponseChannelMessageWithSource,
		Data: &discordgo.InteractionResponseData{
			Content: text, Flags: discordgo.MessageFlagsEphemeral, AllowedMentions: noMentions(),
		},
	}
}
