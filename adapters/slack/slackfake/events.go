package slackfake

import (
	"fmt"
	"strings"
)

// event is an Events API inner event.
type event map[string]any

// SlashCommand pushes a "/workflow text" slash command typed by user in channel.
func (s *Server) SlashCommand(user, channel, text string) (envelopeID string) {
	n := s.next()
	s.mu.Lock()
	s.triggers[fmt.Sprintf("trigger-%06d", n)] = true // good for one views.open
	s.mu.Unlock()
	return s.push("slash_commands", map[string]any{
		"token": "deprecated-verification-token", "team_id": TeamID, "team_domain": "slackfake",
		"channel_id": channel, "channel_name": "channel-" + channel,
		"user_id": user, "user_name": "user-" + user,
		"command": "/workflow", "text": text,
		"response_url": fmt.Sprintf("%s/response/%d", s.srv.URL, n),
		"trigger_id":   fmt.Sprintf("trigger-%06d", n), "api_app_id": AppID,
	})
}

// Mention pushes a message "<@bot> text" by user in channel (in thread threadTS when not empty).
// Like Slack, it sends both the message event and the app_mention event for it; it returns the
// app_mention's envelope id.
func (s *Server) Mention(user, channel, threadTS, text string) string {
	ev := s.userMessage(user, channel, threadTS, "<@"+BotUserID+"> "+text)
	s.pushEvent(ev)
	mention := event{}
	for k, v := range ev {
		mention[k] = v
	}
	mention["type"] = "app_mention"
	delete(mention, "channel_type")
	return s.pushEvent(mention)
}

// ThreadMessage pushes a message by user in thread threadTS of channel, without a mention.
func (s *Server) ThreadMessage(user, channel, threadTS, text string) string {
	return s.pushEvent(s.userMessage(user, channel, threadTS, text))
}

// DirectMessage pushes a message by user in the direct-message channel (an id starting with "D").
func (s *Server) DirectMessage(user, channel, text string) string {
	return s.pushEvent(s.userMessage(user, channel, "", text))
}

// PushEvent pushes any Events API inner event (such as a message_changed message, or a message
// posted by another bot) and returns its envelope id.
func (s *Server) PushEvent(inner map[string]any) string { return s.pushEvent(event(inner)) }

func (s *Server) pushEvent(inner event) string {
	n := s.next()
	return s.push("events_api", map[string]any{
		"token": "deprecated-verification-token", "team_id": TeamID, "api_app_id": AppID,
		"type": "event_callback", "event_id": fmt.Sprintf("Ev%08d", n), "event_time": 1700000000 + n,
		"event": inner,
	})
}

func (s *Server) userMessage(user, channel, threadTS, text string) event {
	s.mu.Lock()
	ts := s.nextTSLocked()
	s.said = append(s.said, &Message{Channel: channel, TS: ts, ThreadTS: threadTS, User: user, Text: text})
	s.mu.Unlock()
	ev := event{"type": "message", "user": user, "text": text, "ts": ts, "event_ts": ts,
		"channel": channel, "channel_type": channelType(channel), "team": TeamID}
	if threadTS != "" {
		ev["thread_ts"] = threadTS
	}
	return ev
}

// botMessageEvent is the echo of the bot's own post.
func botMessageEvent(m Message) event {
	ev := event{"type": "message", "user": BotUserID, "bot_id": BotID, "text": m.Text, "ts": m.TS,
		"event_ts": m.TS, "channel": m.Channel, "channel_type": channelType(m.Channel)}
	if m.ThreadTS != "" {
		ev["thread_ts"] = m.ThreadTS
	}
	return ev
}

// channelType follows Slack's id prefixes: D for direct messages, G for private channels.
func channelType(channel string) string {
	switch {
	case strings.HasPrefix(channel, "D"):
		return "im"
	case strings.HasPrefix(channel, "G"):
		return "group"
	default:
		return "channel"
	}
}

// Click pushes a block_actions interaction: user clicks the button labelled buttonLabel on msg (as
// the channel shows it now, so a button removed by an edit can no longer be clicked).
func (s *Server) Click(user string, msg Message, buttonLabel string) string {
	s.mu.Lock()
	cur := s.findLocked(msg.Channel, msg.TS)
	var now Message
	if cur != nil {
		now = cur.clone()
	}
	n := s.nextLocked()
	s.mu.Unlock()
	if cur == nil {
		s.t.Fatalf("slackfake: Click on unknown message %s/%s", msg.Channel, msg.TS)
		return ""
	}
	btn, ok := findButton(now, buttonLabel)
	if !ok {
		s.t.Fatalf("slackfake: no button %q on %s", buttonLabel, now.describe())
		return ""
	}
	return s.push("interactive", blockActions(user, now, btn, n, s.srv.URL))
}

func findButton(m Message, label string) (Button, bool) {
	for _, b := range m.Buttons {
		if b.Label == label {
			return b, true
		}
	}
	return Button{}, false
}

func blockActions(user string, m Message, b Button, n int, base string) map[string]any {
	actionTS := fmt.Sprintf("1700000001.%06d", n)
	container := map[string]any{"type": "message", "message_ts": m.TS, "channel_id": m.Channel,
		"is_ephemeral": false}
	msg := map[string]any{"type": "message", "user": m.User, "bot_id": BotID, "text": m.Text, "ts": m.TS}
	if m.ThreadTS != "" {
		container["thread_ts"] = m.ThreadTS
		msg["thread_ts"] = m.ThreadTS
	}
	return map[string]any{
		"type": "block_actions", "api_app_id": AppID, "token": "deprecated-verification-token",
		"team":         map[string]any{"id": TeamID, "domain": "slackfake"},
		"user":         map[string]any{"id": user, "username": "user-" + user, "team_id": TeamID},
		"channel":      map[string]any{"id": m.Channel, "name": "channel-" + m.Channel},
		"container":    container,
		"message":      msg,
		"trigger_id":   fmt.Sprintf("trigger-%06d", n),
		"response_url": fmt.Sprintf("%s/response/%d", base, n),
		"actions": []map[string]any{{
			"type": "button", "action_id": b.ActionID, "block_id": "actions", "value": b.Value,
			"style": b.Style, "action_ts": actionTS,
			"text": map[string]any{"type": "plain_text", "text": b.Label, "emoji": true},
		}},
	}
}

func (s *Server) next() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.nextLocked()
}
