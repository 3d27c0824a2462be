package slackfake

import (
	"encoding/json"
	"net/http"
	"strings"
)

// Limits Slack enforces and the fake checks, so a bot that passes against the fake does not hit
// them in production.
const (
	maxTextLen        = 40000
	maxSectionTextLen = 3000
	maxButtonLabelLen = 75
	maxButtonValueLen = 2000
)

// apiResult is any Web API answer; "ok" and "error" are added by reply.
type apiResult map[string]any

func (s *Server) serveAPI(w http.ResponseWriter, r *http.Request) {
	method := strings.TrimPrefix(r.URL.Path, "/api/")
	if err := r.ParseForm(); err != nil {
		reply(w, apiResult{"error": "invalid_form_data"})
		return
	}
	wantPrefix := "xoxb-"
	want := BotToken
	if method == "apps.connections.open" {
		wantPrefix, want = "xapp-", AppToken
	}
	switch token := requestToken(r); {
	case token == "":
		reply(w, apiResult{"error": "not_authed"})
		return
	case !strings.HasPrefix(token, wantPrefix):
		reply(w, apiResult{"error": "not_allowed_token_type"})
		return
	case token != want:
		reply(w, apiResult{"error": "invalid_auth"})
		return
	}
	switch method {
	case "auth.test":
		reply(w, apiResult{"ok": true, "url": "https://slackfake.invalid/", "team": "Slackfake",
			"user": "threadflow", "team_id": TeamID, "user_id": BotUserID, "bot_id": BotID})
	case "apps.connections.open":
		reply(w, apiResult{"ok": true, "url": "ws://" + r.Host + "/socket"})
	case "chat.postMessage":
		s.postMessage(w, r)
	case "chat.update":
		reply(w, s.update(r))
	case "chat.postEphemeral":
		reply(w, s.postEphemeral(r))
	case "conversations.history":
		reply(w, s.history(r))
	case "conversations.replies":
		reply(w, s.replies(r))
	case "views.open":
		reply(w, s.viewsOpen(r))
	case "usergroups.users.list":
		reply(w, s.usergroupsUsersList(r))
	case "conversations.open":
		reply(w, s.conversationsOpen(r))
	case "chat.getPermalink":
		reply(w, s.getPermalink(r))
	default:
		reply(w, apiResult{"error": "unknown_method"})
	}
}

// requestToken reads the token the way Slack does: a Bearer header or a "token" form field.
func requestToken(r *http.Request) string {
	if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
		return strings.TrimPrefix(h, "Bearer ")
	}
	return r.Form.Get("token")
}

func reply(w http.ResponseWriter, res apiResult) {
	if _, ok := res["ok"]; !ok {
		res["ok"] = false
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(res)
}

func (s *Server) postMessage(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	limited := s.rateLimited > 0
	if limited {
		s.rateLimited--
	}
	s.mu.Unlock()
	if limited {
		w.Header().Set("Retry-After", "1")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusTooManyRequests)
		reply(w, apiResult{"error": "ratelimited"})
		return
	}
	m, errCode := parseMessage(r)
	if errCode != "" {
		reply(w, apiResult{"error": errCode})
		return
	}
	h := s.hold.Take(m.Text)
	if !h.Before(r.Context()) { // the bot is gone: its request never got through
		return
	}
	s.mu.Lock()
	if s.refuseAfter == 0 {
		s.mu.Unlock()
		reply(w, apiResult{"error": "internal_error"})
		return
	}
	if s.refuseAfter > 0 {
		s.refuseAfter--
	}
	lost := s.loseAnswers > 0
	if lost {
		s.loseAnswers--
	}
	m.TS = s.nextTSLocked()
	m.User = BotUserID
	s.messages = append(s.messages, &m)
	s.posts[m.Channel+"/"+m.ThreadTS]++
	s.notifyLocked()
	s.mu.Unlock()
	// Slack delivers the bot's own posts back to it as message events; so does the fake, so every
	// test also proves the bot ignores its own messages.
	s.pushEvent(botMessageEvent(m))
	h.After()
	if lost {
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	reply(w, apiResult{"ok": true, "channel": m.Channel, "ts": m.TS,
		"message": apiResult{"text": m.Text, "ts": m.TS, "thread_ts": m.ThreadTS}})
}

func (s *Server) update(r *http.Request) apiResult {
	channel, ts := r.Form.Get("channel"), r.Form.Get("ts")
	next, errCode := parseMessage(r)
	if errCode != "" {
		return apiResult{"error": errCode}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.findLocked(channel, ts)
	if m == nil {
		return apiResult{"error": "message_not_found"}
	}
	if r.Form.Has("text") {
		m.Text = next.Text
	}
	// Like Slack, blocks are kept unless the update sends them; "[]" removes them.
	if r.Form.Has("blocks") {
		m.Blocks, m.Buttons = next.Blocks, next.Buttons
	}
	if r.Form.Has("metadata") { // kept otherwise, as blocks are
		m.Metadata = next.Metadata
	}
	m.Edited = true
	s.notifyLocked()
	return apiResult{"ok": true, "channel": channel, "ts": ts, "text": m.Text}
}

func (s *Server) postEphemeral(r *http.Request) apiResult {
	user := r.Form.Get("user")
	if user == "" {
		return apiResult{"error": "user_not_in_channel"}
	}
	m, errCode := parseMessage(r)
	if errCode != "" {
		return apiResult{"error": errCode}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	m.TS = s.nextTSLocked()
	m.User = BotUserID
	s.ephemerals[user] = append(s.ephemerals[user], m)
	s.notifyLocked()
	return apiResult{"ok": true, "message_ts": m.TS}
}

func (s *Server) findLocked(channel, ts string) *Message {
	for _, m := range s.messages {
		if m.Channel == channel && m.TS == ts {
			return m
		}
	}
	return nil
}

// serveResponseURL fails the test: the bot must answer through the Web API with the bot token,
// never through a slash command's response_url, which expires long before an approval gate does.
func (s *Server) serveResponseURL(w http.ResponseWriter, r *http.Request) {
	s.t.Errorf("slackfake: bot used a response_url (%s); it must use chat.postMessage/chat.update", r.URL.Path)
	reply(w, apiResult{"error": "expired_url"})
}

// parseMessage reads channel, text, thread_ts and blocks of a chat.* call and checks them against
// Slack's limits, returning Slack's error code when one is broken.
func parseMessage(r *http.Request) (Message, string) {
	m := Message{
		Channel:  r.Form.Get("channel"),
		ThreadTS: r.Form.Get("thread_ts"),
		Text:     r.Form.Get("text"),
		Blocks:   r.Form.Get("blocks"),
	}
	switch {
	case m.Channel == "":
		return m, "channel_not_found"
	case len(m.Text) > maxTextLen:
		return m, "msg_too_long"
	}
	buttons, hasContent, ok := parseBlocks(m.Blocks)
	if !ok {
		return m, "invalid_blocks"
	}
	if raw := r.Form.Get("metadata"); raw != "" {
		if m.Metadata, ok = parseMetadata(raw); !ok {
			return m, "invalid_metadata_format"
		}
	}
	if m.Text == "" && !hasContent && r.URL.Path != "/api/chat.update" {
		return m, "no_text"
	}
	if m.Blocks == "[]" {
		m.Blocks = ""
	}
	m.Buttons = buttons
	return m, ""
}

// parseMetadata reads a message's "metadata" argument: a JSON object with a non-empty event_type
// and an event_payload object, as Slack requires, or an empty object, which chat.update takes to
// remove the metadata (Slack keeps it when the argument is left out).
func parseMetadata(raw string) (Metadata, bool) {
	var md struct {
		EventType    *string        `json:"event_type"`
		EventPayload map[string]any `json:"event_payload"`
	}
	if err := json.Unmarshal([]byte(raw), &md); err != nil {
		return Metadata{}, false
	}
	if md.EventType == nil && md.EventPayload == nil {
		return Metadata{}, true
	}
	if md.EventType == nil || *md.EventType == "" || md.EventPayload == nil {
		return Metadata{}, false
	}
	return Metadata{EventType: *md.EventType, Payload: md.EventPayload}, true
}
