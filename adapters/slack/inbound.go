package slack

import (
	"regexp"
	"strings"

	slackapi "github.com/slack-go/slack"
	"github.com/slack-go/slack/slackevents"
	"github.com/slack-go/slack/socketmode"

	"threadflow/conversation"
)

// commandPrefix is what the command parser expects. A slash command arrives as its argument text
// only; it is always prefixed with "/workflow", so a workspace where that name was taken and the
// app's command is called something else still works.
const commandPrefix = "/workflow"

// actionPrefix marks the action ids of buttons this adapter posted; clicks on anything else are
// not ours to handle.
const actionPrefix = "threadflow."

// inbound translates Socket Mode events into conversation Messages. It is pure: no I/O.
type inbound struct {
	botUserID string         // from auth.test; messages by this user are the bot's own
	mentionRE *regexp.Regexp // <@BOTUSERID> and <@BOTUSERID|name>
}

func newInbound(botUserID string) inbound {
	return inbound{
		botUserID: botUserID,
		mentionRE: regexp.MustCompile(`<@` + regexp.QuoteMeta(botUserID) + `(?:\|[^>]*)?>`),
	}
}

func (in inbound) translate(ev socketmode.Event) (conversation.Message, bool) {
	envelopeID := ev.Request.EnvelopeID
	switch data := ev.Data.(type) {
	case slackapi.SlashCommand:
		return in.slashCommand(data, envelopeID), true
	case slackevents.EventsAPIEvent:
		return in.event(data)
	case slackapi.InteractionCallback:
		return in.click(data, envelopeID)
	}
	return conversation.Message{}, false
}

// slashCommand: the channel is the conversation (Slack does not say which thread a command was
// typed in). A slash command is addressed to the bot by construction, hence Mentioned.
func (in inbound) slashCommand(c slackapi.SlashCommand, envelopeID string) conversation.Message {
	id := c.TriggerID
	if id == "" {
		id = envelopeID
	}
	text := strings.TrimSpace(commandPrefix + " " + in.clean(c.Text))
	return conversation.Message{
		Address:   conversation.Address{Platform: Platform, ChannelID: c.ChannelID},
		UserID:    userID(c.UserID),
		UserName:  c.UserName,
		Text:      text,
		EventID:   "command:" + id,
		Mentioned: true,
		Direct:    isDirect(c.ChannelID),
	}
}

func (in inbound) event(e slackevents.EventsAPIEvent) (conversation.Message, bool) {
	if e.Type != slackevents.CallbackEvent {
		return conversation.Message{}, false
	}
	switch ev := e.InnerEvent.Data.(type) {
	case *slackevents.AppMentionEvent:
		return in.mention(ev)
	case *slackevents.MessageEvent:
		return in.message(ev)
	}
	return conversation.Message{}, false
}

// mention: a top-level mention's conversation is the channel, one inside a thread the thread.
func (in inbound) mention(ev *slackevents.AppMentionEvent) (conversation.Message, bool) {
	if in.fromBot(ev.User, ev.BotID) || ev.Edited != nil {
		return conversation.Message{}, false
	}
	return in.posted(ev.Channel, ev.ThreadTimeStamp, ev.TimeStamp, ev.User, ev.Text, true, isDirect(ev.Channel)), true
}

// message handles plain messages: replies in threads (the orchestrator decides whether the thread
// is a run's) and direct messages. Slack sends a message event AND an app_mention for a message
// that mentions the bot; the mention wins, so such a message event is dropped here. Both carry the
// same EventID (channel+ts) too, so the database de-duplication would catch a second one anyway.
func (in inbound) message(ev *slackevents.MessageEvent) (conversation.Message, bool) {
	// Subtypes are edits, deletions, joins, bot posts...; a thread_broadcast is a real reply.
	if ev.SubType != "" && ev.SubType != "thread_broadcast" {
		return conversation.Message{}, false
	}
	if in.fromBot(ev.User, ev.BotID) {
		return conversation.Message{}, false
	}
	direct := ev.ChannelType == "im" || isDirect(ev.Channel)
	mentioned := in.mentions(ev.Text)
	if !direct && (ev.ThreadTimeStamp == "" || ev.ThreadTimeStamp == ev.TimeStamp || mentioned) {
		return conversation.Message{}, false
	}
	return in.posted(ev.Channel, ev.ThreadTimeStamp, ev.TimeStamp, ev.User, ev.Text, mentioned, direct), true
}

// posted is the Message of a message a person posted, as a mention or a plain message event
// carries it: its conversation is the thread it is in, or the channel.
func (in inbound) posted(channel, threadTS, ts, user, text string, mentioned, direct bool) conversation.Message {
	return conversation.Message{
		Address:   conversation.Address{Platform: Platform, ChannelID: channel, ThreadID: threadTS},
		UserID:    userID(user),
		Text:      in.clean(text),
		EventID:   messageEventID(channel, ts),
		Mentioned: mentioned,
		Direct:    direct,
	}
}

// click turns a button of ours into its text command, run as the clicking user.
func (in inbound) click(cb slackapi.InteractionCallback, envelopeID string) (conversation.Message, bool) {
	if cb.Type != slackapi.InteractionTypeBlockActions {
		return conversation.Message{}, false
	}
	var action *slackapi.BlockAction
	for _, a := range cb.ActionCallback.BlockActions {
		if strings.HasPrefix(a.ActionID, actionPrefix) {
			action = a
			break
		}
	}
	if action == nil || cb.User.ID == "" {
		return conversation.Message{}, false
	}
	addr := conversation.Address{
		Platform:  Platform,
		ChannelID: firstNonEmpty(cb.Container.ChannelID, cb.Channel.ID),
		ThreadID:  firstNonEmpty(cb.Container.ThreadTs, cb.Message.ThreadTimestamp),
	}
	id := firstNonEmpty(cb.TriggerID, envelopeID)
	return conversation.Message{
		Address:  addr,
		UserID:   userID(cb.User.ID),
		UserName: firstNonEmpty(cb.User.Name, cb.User.Profile.DisplayName),
		Text:     action.Value,
		EventID:  "click:" + id,
		Direct:   isDirect(addr.ChannelID),
		Action: &conversation.Action{Ref: conversation.Ref{
			Address:   addr,
			MessageID: firstNonEmpty(cb.Container.MessageTs, cb.Message.Timestamp),
		}},
	}, true
}

func (in inbound) fromBot(user, botID string) bool {
	return botID != "" || user == "" || user == in.botUserID
}

func (in inbound) mentions(text string) bool { return in.mentionRE.MatchString(text) }

var (
	slackLinkToken = regexp.MustCompile(`<((?:https?|mailto):[^|>]*)(?:\|[^>]*)?>`)
	entityDecoder  = strings.NewReplacer("&lt;", "<", "&gt;", ">", "&amp;", "&")
)

// clean turns Slack's wire text back into what the person typed: the bot's own mention removed,
// links unwrapped to their URL, and Slack's &amp; &lt; &gt; decoded (so `a < b` reaches the
// command parser as typed).
func (in inbound) clean(text string) string {
	text = in.mentionRE.ReplaceAllString(text, "")
	text = slackLinkToken.ReplaceAllString(text, "$1")
	return strings.TrimSpace(entityDecoder.Replace(text))
}

// messageEventID names a message by channel and ts, which app_mention and message events for the
// same message share.
func messageEventID(channel, ts string) string { return "message:" + channel + ":" + ts }

func userID(id string) string { return Platform + ":" + id }

// isDirect follows Slack's id convention: direct-message channels start with D.
func isDirect(channel string) bool { return strings.HasPrefix(channel, "D") }

func firstNonEmpty(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
