package discordfake

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"threadflow/testkit/posthold"
)

// apiPath strips the REST root ("/api/v9/", "/api/v10/", ...): the fake answers any version.
func apiPath(p string) (string, bool) {
	rest, ok := strings.CutPrefix(p, "/api/v")
	if !ok {
		return "", false
	}
	_, rest, ok = strings.Cut(rest, "/")
	return rest, ok
}

// route is one REST endpoint: a method and a path pattern whose "*" segments are captured.
type route struct {
	method, pattern string
	handle          func(s *Server, r *http.Request, args []string, body []byte) (int, any)
}

var routes = []route{
	{"GET", "gateway", (*Server).getGateway},
	{"GET", "gateway/bot", (*Server).getGateway},
	{"GET", "users/@me", func(*Server, *http.Request, []string, []byte) (int, any) { return 200, botUser() }},
	{"GET", "channels/*", (*Server).getChannel},
	{"PUT", "applications/*/commands", (*Server).putCommands},
	{"PUT", "applications/*/guilds/*/commands", (*Server).putCommands},
	{"POST", "interactions/*/*/callback", withJSON("callback", (*Server).postCallback)},
	{"POST", "webhooks/*/*", withJSON("followup", (*Server).postFollowup)},
	{"PATCH", "webhooks/*/*/messages/@original", withJSON("edit original", (*Server).patchOriginal)},
	{"POST", "channels/*/messages", (*Server).createMessage},
	{"PATCH", "channels/*/messages/*", withJSON("message", (*Server).patchMessage)},
	{"POST", "channels/*/messages/*/threads", (*Server).postThread},
	{"GET", "guilds/*/members", (*Server).listMembers},
	{"POST", "users/@me/channels", (*Server).createDM},
}

// withJSON is the handle of a route whose body is a T: a body that is not one is answered 400,
// naming what.
func withJSON[T any](what string, handle func(s *Server, args []string, body T) (int, any)) func(*Server, *http.Request, []string, []byte) (int, any) {
	return func(s *Server, _ *http.Request, args []string, raw []byte) (int, any) {
		var body T
		if err := json.Unmarshal(raw, &body); err != nil {
			return 400, apiError(what + ": " + err.Error())
		}
		return handle(s, args, body)
	}
}

func (s *Server) serveREST(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	path, _ := apiPath(r.URL.Path)
	for _, rt := range routes {
		args, ok := match(rt.pattern, path)
		if !ok || rt.method != r.Method {
			continue
		}
		if !strings.HasPrefix(r.Header.Get("Authorization"), "Bot ") {
			writeJSON(w, http.StatusUnauthorized, apiError("401: Unauthorized"))
			return
		}
		code, v := rt.handle(s, r, args, body)
		writeJSON(w, code, v)
		return
	}
	s.mu.Lock()
	s.unhandled = append(s.unhandled, r.Method+" "+r.URL.Path)
	s.mu.Unlock()
	writeJSON(w, http.StatusNotFound, apiError("404: Not Found"))
}

// match compares a path with a pattern segment by segment, capturing "*" segments.
func match(pattern, path string) ([]string, bool) {
	ps, xs := strings.Split(pattern, "/"), strings.Split(strings.Trim(path, "/"), "/")
	if len(ps) != len(xs) {
		return nil, false
	}
	var args []string
	for i, p := range ps {
		switch {
		case p == "*":
			args = append(args, xs[i])
		case p != xs[i]:
			return nil, false
		}
	}
	return args, true
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	if code == http.StatusNoContent {
		w.WriteHeader(code)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

func apiError(msg string) map[string]any { return map[string]any{"code": 0, "message": msg} }

func (s *Server) getGateway(r *http.Request, _ []string, _ []byte) (int, any) {
	return 200, map[string]any{"url": "ws://" + r.Host + "/gateway", "shards": 1}
}

func (s *Server) getChannel(_ *http.Request, args []string, _ []byte) (int, any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := s.channelLocked(args[0])
	out := map[string]any{"id": c.ID, "type": c.Type}
	if c.GuildID != "" {
		out["guild_id"] = c.GuildID
	}
	if c.ParentID != "" {
		out["parent_id"] = c.ParentID
	}
	return 200, out
}

func (s *Server) putCommands(_ *http.Request, args []string, body []byte) (int, any) {
	var cmds []map[string]any
	if err := json.Unmarshal(body, &cmds); err != nil {
		return 400, apiError("commands: " + err.Error())
	}
	scope := "global"
	if len(args) == 2 {
		scope = args[1]
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.commands[scope] = body
	for _, c := range cmds {
		c["id"] = s.id()
		c["application_id"] = args[0]
	}
	return 200, cmds
}

// messageBody is the part of a message create/edit/followup body the fake understands.
type messageBody struct {
	Content         *string         `json:"content"`
	Flags           int             `json:"flags"`
	Nonce           json.RawMessage `json:"nonce"` // a string or an integer
	EnforceNonce    bool            `json:"enforce_nonce"`
	AllowedMentions *struct {
		Parse []string `json:"parse"`
		Users []string `json:"users"`
		Roles []string `json:"roles"`
	} `json:"allowed_mentions"`
	Components *[]struct {
		Components []struct {
			Label    string `json:"label"`
			CustomID string `json:"custom_id"`
			Style    int    `json:"style"`
		} `json:"components"`
	} `json:"components"`
}

// noneAllowed reports whether allowed_mentions.parse was sent as an empty list.
func (b messageBody) noneAllowed() bool {
	return b.AllowedMentions != nil && b.AllowedMentions.Parse != nil && len(b.AllowedMentions.Parse) == 0
}

func (b messageBody) buttons() []Button {
	if b.Components == nil {
		return nil
	}
	var out []Button
	for _, row := range *b.Components {
		for _, c := range row.Components {
			out = append(out, Button{Label: c.Label, CustomID: c.CustomID, Style: c.Style})
		}
	}
	return out
}

// apply writes a create or edit body onto m; fields the body leaves out keep their value.
func (b messageBody) apply(m *Message) {
	if b.Content != nil {
		m.Content = *b.Content
	}
	if b.Components != nil {
		m.Buttons = b.buttons()
	}
	m.AllowedMentionsNone = b.noneAllowed()
	m.AllowedUsers, m.AllowedRoles = nil, nil
	if a := b.AllowedMentions; a != nil {
		m.AllowedUsers, m.AllowedRoles = append([]string(nil), a.Users...), append([]string(nil), a.Roles...)
	}
}

func messageJSON(m *Message) map[string]any {
	out := map[string]any{
		"id": m.ID, "channel_id": m.ChannelID, "content": m.Content,
		"author": map[string]any{"id": m.Author}, "timestamp": time.Now().UTC().Format(time.RFC3339),
	}
	if m.Nonce != "" {
		out["nonce"] = m.Nonce
	}
	return out
}

// nonce reads the body's nonce as Discord does: a string of at most MaxNonce characters or an
// integer; anything else is a 400 naming the field.
func (b messageBody) nonce() (string, map[string]any) {
	if len(b.Nonce) == 0 || string(b.Nonce) == "null" {
		return "", nil
	}
	var str string
	if err := json.Unmarshal(b.Nonce, &str); err != nil {
		var n json.Number
		if err := json.Unmarshal(b.Nonce, &n); err != nil {
			return "", invalidForm("nonce", "NONCE_TYPE_INVALID", "Nonce must be a string or an integer.")
		}
		str = n.String()
	}
	if len([]rune(str)) > MaxNonce {
		return "", invalidForm("nonce", "BASE_TYPE_BAD_LENGTH", fmt.Sprintf("Must be %d or fewer in length.", MaxNonce))
	}
	return str, nil
}

// invalidForm is Discord's 400 for a field it refuses (code 50035, Invalid Form Body).
func invalidForm(field, code, msg string) map[string]any {
	return map[string]any{"code": 50035, "message": "Invalid Form Body",
		"errors": map[string]any{field: map[string]any{"_errors": []map[string]any{{"code": code, "message": msg}}}}}
}

// createMessage is Create Message: postMessage, held when HoldPost asks.
func (s *Server) createMessage(r *http.Request, args []string, raw []byte) (int, any) {
	var b messageBody
	if err := json.Unmarshal(raw, &b); err != nil {
		return 400, apiError("message: " + err.Error())
	}
	var h *posthold.Hold
	if b.Content != nil {
		h = s.hold.Take(*b.Content)
	}
	if !h.Before(r.Context()) {
		return 499, apiError("the bot is gone") // nobody reads this answer
	}
	code, out := s.postMessage(args, b)
	h.After()
	return code, out
}

func (s *Server) postMessage(args []string, b messageBody) (int, any) {
	nonce, invalid := b.nonce()
	if invalid != nil {
		return 400, invalid
	}
	s.mu.Lock()
	if s.failSends > 0 {
		s.failSends--
		s.mu.Unlock()
		return 500, apiError("500: injected failure")
	}
	if b.EnforceNonce && nonce != "" {
		if prev, ok := s.nonces[nonce]; ok && time.Since(prev.at) < NonceWindow {
			out := messageJSON(prev.m)
			s.mu.Unlock()
			return 200, out // the message created with this nonce: nothing new, no event
		}
	}
	c := s.channelLocked(args[0])
	if c.Type == 1 && s.noDMs[c.Recipient] {
		s.mu.Unlock()
		return 403, map[string]any{"code": 50007, "message": "Cannot send messages to this user"}
	}
	m := &Message{ID: s.id(), ChannelID: args[0], Author: BotUserID, Nonce: nonce}
	b.apply(m)
	s.messages[args[0]] = append(s.messages[args[0]], m)
	s.posts[args[0]]++
	if nonce != "" {
		s.nonces[nonce] = sent{m: m, at: time.Now()}
	}
	lost := s.loseAnswers > 0
	if lost {
		s.loseAnswers--
	}
	s.mu.Unlock()
	// Discord echoes the bot's own messages on the gateway; a bot must ignore them.
	s.dispatch("MESSAGE_CREATE", messageEvent(c, m, Profile{}, nil))
	if lost {
		return 502, apiError("502: the answer was lost")
	}
	return 200, messageJSON(m)
}

func (s *Server) patchMessage(args []string, b messageBody) (int, any) {
	s.mu.Lock()
	defer s.mu.Unlock()
	m := s.findLocked(args[0], args[1])
	if m == nil {
		return 404, apiError("10008: Unknown Message")
	}
	b.apply(m)
	m.Edited = true
	return 200, messageJSON(m)
}

func (s *Server) findLocked(channelID, id string) *Message {
	for _, m := range s.messages[channelID] {
		if m.ID == id {
			return m
		}
	}
	return nil
}

func (s *Server) postThread(_ *http.Request, args []string, body []byte) (int, any) {
	var b struct {
		Name string `json:"name"`
	}
	if err := json.Unmarshal(body, &b); err != nil || b.Name == "" || len([]rune(b.Name)) > 100 {
		return 400, apiError(fmt.Sprintf("thread name must be 1-100 characters, got %q", b.Name))
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.findLocked(args[0], args[1]) == nil {
		return 404, apiError("10008: Unknown Message")
	}
	// Like Discord, a thread started from a message has the message's id, so there is one at most.
	if _, ok := s.channels[args[1]]; ok {
		return 400, map[string]any{"code": 160004, "message": "A thread has already been created for this message"}
	}
	parent := s.channelLocked(args[0])
	th := Thread{ID: args[1], ParentID: args[0], MessageID: args[1], Name: b.Name}
	s.threads = append(s.threads, th)
	s.channels[th.ID] = channel{ID: th.ID, GuildID: parent.GuildID, ParentID: args[0], Type: 11}
	return 201, map[string]any{"id": th.ID, "type": 11, "parent_id": args[0], "guild_id": parent.GuildID, "name": b.Name}
}
