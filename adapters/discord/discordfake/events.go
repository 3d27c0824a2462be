package discordfake

import (
	"sort"
	"time"
)

// Interaction types (Discord's numbering).
const (
	interactionCommand      = 2
	interactionComponent    = 3
	interactionAutocomplete = 4
)

// SlashCommand sends "/workflow <sub>" with options, as user in channel (a thread id works too),
// to every connected session and returns the interaction id. Option values are string, bool or
// int, as Discord delivers them.
func (s *Server) SlashCommand(user, channel, sub string, opts map[string]any) string {
	return s.command(interactionCommand, user, channel, sub, options(opts, ""))
}

// Autocomplete sends an autocomplete request for option of sub while the user has typed partial.
func (s *Server) Autocomplete(user, channel, sub, option, partial string) string {
	return s.command(interactionAutocomplete, user, channel, sub, options(map[string]any{option: partial}, option))
}

func (s *Server) command(typ int, user, channel, sub string, opts []map[string]any) string {
	data := map[string]any{
		"id": "900000000000000010", "name": "workflow", "type": 1,
		"options": []map[string]any{{"name": sub, "type": 1, "options": opts}},
	}
	return s.interact(typ, user, channel, data, nil)
}

// options turns a map into Discord's option list, sorted by name so events are reproducible.
func options(opts map[string]any, focused string) []map[string]any {
	names := make([]string, 0, len(opts))
	for n := range opts {
		names = append(names, n)
	}
	sort.Strings(names)
	out := make([]map[string]any, 0, len(opts))
	for _, n := range names {
		o := map[string]any{"name": n, "value": opts[n], "type": optionType(opts[n])}
		if n == focused {
			o["focused"] = true
		}
		out = append(out, o)
	}
	return out
}

func optionType(v any) int {
	switch v.(type) {
	case bool:
		return 5
	case int, int64:
		return 4
	case float64:
		return 10
	default:
		return 3
	}
}

// Click presses the button labelled label on msg, as user, and returns the interaction id. The
// test fails at once (panics via a nil button) if the message does not carry that button now.
func (s *Server) Click(user string, msg Message, label string) string {
	s.mu.Lock()
	current := s.findLocked(msg.ChannelID, msg.ID)
	var id string
	if current != nil {
		for _, b := range current.Buttons {
			if b.Label == label {
				id = b.CustomID
			}
		}
	}
	s.mu.Unlock()
	if id == "" {
		panic("discordfake: message " + msg.ID + " has no button labelled " + label)
	}
	data := map[string]any{"custom_id": id, "component_type": 2}
	ref := map[string]any{"id": msg.ID, "channel_id": msg.ChannelID, "content": current.Content}
	return s.interact(interactionComponent, user, msg.ChannelID, data, ref)
}

// interact registers an interaction with a fresh id and token and dispatches it.
func (s *Server) interact(typ int, user, channelID string, data, msg map[string]any) string {
	s.mu.Lock()
	c := s.channelLocked(channelID)
	in := interaction{ID: s.id(), ChannelID: channelID, Sent: time.Now()}
	in.Token = "token-" + in.ID
	s.interactions[in.ID] = in
	p := s.profileLocked(user)
	s.mu.Unlock()
	ev := map[string]any{
		"id": in.ID, "application_id": AppID, "type": typ, "token": in.Token, "version": 1,
		"channel_id": channelID, "data": data,
	}
	if msg != nil {
		ev["message"] = msg
	}
	if c.GuildID == "" {
		ev["user"] = userJSON(user, p)
	} else {
		ev["guild_id"] = c.GuildID
		ev["member"] = map[string]any{"user": userJSON(user, p), "nick": nullable(p.Nick), "roles": rolesJSON(p)}
	}
	s.dispatch("INTERACTION_CREATE", ev)
	return in.ID
}

// userJSON is a user object; Discord sends null for a global name or nickname that is not set.
func userJSON(id string, p Profile) map[string]any {
	return map[string]any{"id": id, "username": p.Username, "global_name": nullable(p.GlobalName)}
}

// rolesJSON is a member's roles: always a list, empty when they have none.
func rolesJSON(p Profile) []string {
	return append([]string{}, p.Roles...)
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// Mention posts "<@bot> text" in channel as user and returns the message id.
func (s *Server) Mention(user, channel, text string) string {
	return s.userMessage(user, channel, "<@"+BotUserID+"> "+text, true)
}

// ThreadMessage posts text in a thread as user, without mentioning the bot.
func (s *Server) ThreadMessage(user, thread, text string) string {
	return s.userMessage(user, thread, text, false)
}

// ChannelMessage posts text in a channel as user, without mentioning the bot.
func (s *Server) ChannelMessage(user, channel, text string) string {
	return s.userMessage(user, channel, text, false)
}

// DirectMessage sends text to the bot in a DM channel with user and returns the message id. The
// DM channel's id is DMChannel(user).
func (s *Server) DirectMessage(user, text string) string {
	s.mu.Lock()
	s.channels[DMChannel(user)] = channel{ID: DMChannel(user), Type: 1, Recipient: user}
	s.mu.Unlock()
	return s.userMessage(user, DMChannel(user), text, false)
}

// DMChannel is the id of the fake's DM channel between the bot and user.
func DMChannel(user string) string { return "dm" + user }

func (s *Server) userMessage(user, channelID, content string, mention bool) string {
	s.mu.Lock()
	c := s.channelLocked(channelID)
	m := &Message{ID: s.id(), ChannelID: channelID, Content: content, Author: user}
	s.messages[channelID] = append(s.messages[channelID], m)
	p := s.profileLocked(user)
	s.mu.Unlock()
	var mentions []any
	if mention {
		mentions = []any{botUser()}
	}
	s.dispatch("MESSAGE_CREATE", messageEvent(c, m, p, mentions))
	return m.ID
}

// messageEvent is MESSAGE_CREATE; in a guild it carries the author's member object without its
// user, as Discord sends it.
func messageEvent(c channel, m *Message, p Profile, mentions []any) map[string]any {
	author := userJSON(m.Author, p)
	if m.Author == BotUserID {
		author = botUser()
	}
	ev := map[string]any{
		"id": m.ID, "channel_id": m.ChannelID, "content": m.Content, "author": author,
		"mentions": mentions, "timestamp": time.Now().UTC().Format(time.RFC3339),
	}
	if mentions == nil {
		ev["mentions"] = []any{}
	}
	if m.Nonce != "" { // the nonce appears in the Message Create event, as Discord documents
		ev["nonce"] = m.Nonce
	}
	if c.GuildID != "" {
		ev["guild_id"] = c.GuildID
		ev["member"] = map[string]any{"nick": nullable(p.Nick), "roles": rolesJSON(p)}
	}
	return ev
}
