package slackfake

import (
	"net/http"
	"net/url"
	"strings"
)

// Direct messages and permalinks, as Slack serves them: conversations.open gives the DM channel of
// one user (D + the user id here), chat.getPermalink a URL that names the message's channel and ts
// (and, for a reply, its thread).

// NoDMs makes conversations.open with the user answer the error code (Slack answers
// "user_disabled" for a deactivated account, "cannot_dm_bot" for a bot); "" lets them be sent DMs
// again.
func (s *Server) NoDMs(user, code string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if code == "" {
		delete(s.noDMs, user)
		return
	}
	s.noDMs[user] = code
}

// DMChannel is the id of the DM channel conversations.open gives for user.
func DMChannel(user string) string { return "D" + user }

// DMs are the bot's messages in the DM with user, oldest first.
func (s *Server) DMs(user string) []Message {
	return s.Messages(DMChannel(user))
}

// conversationsOpen answers conversations.open for one user: the DM channel with the bot.
func (s *Server) conversationsOpen(r *http.Request) apiResult {
	users := r.Form.Get("users")
	if users == "" || strings.Contains(users, ",") {
		return apiResult{"error": "users_list_not_supplied"} // the fake opens one-to-one DMs only
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if code := s.noDMs[users]; code != "" {
		return apiResult{"error": code}
	}
	return apiResult{"ok": true, "channel": apiResult{"id": DMChannel(users), "is_im": true, "user": users}}
}

// getPermalink answers chat.getPermalink for a message the bot posted.
func (s *Server) getPermalink(r *http.Request) apiResult {
	channel, ts := r.Form.Get("channel"), r.Form.Get("message_ts")
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.findLocked(channel, ts)
	if m == nil {
		return apiResult{"error": "message_not_found"}
	}
	link := "https://slackfake.invalid/archives/" + channel + "/p" + strings.ReplaceAll(ts, ".", "")
	if m.ThreadTS != "" {
		link += "?" + url.Values{"thread_ts": {m.ThreadTS}, "cid": {channel}}.Encode()
	}
	return apiResult{"ok": true, "channel": channel, "permalink": link}
}

// Permalinked is the message a permalink of chat.getPermalink opens, as a person clicking it would
// see it; ok is false when it names none.
func (s *Server) Permalinked(link string) (Message, bool) {
	u, err := url.Parse(link)
	if err != nil {
		return Message{}, false
	}
	parts := strings.Split(strings.TrimPrefix(u.Path, "/archives/"), "/")
	if len(parts) != 2 || !strings.HasPrefix(parts[1], "p") || len(parts[1]) < 8 {
		return Message{}, false
	}
	digits := strings.TrimPrefix(parts[1], "p")
	ts := digits[:len(digits)-6] + "." + digits[len(digits)-6:]
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.findLocked(parts[0], ts)
	if m == nil || m.ThreadTS != u.Query().Get("thread_ts") {
		return Message{}, false
	}
	return *m, true
}
