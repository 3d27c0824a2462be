package web

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"time"

	"go.uber.org/zap"

	"threadflow/conversation"
)

// The web user: a self-declared name kept in a cookie. It is who the orchestrator sees (web:NAME)
// for authorization (ALLOWED_USER_IDS, ADMIN_USER_IDS); the dashboard itself is protected by
// DASHBOARD_TOKEN.
const (
	userCookie  = "threadflow_user"
	defaultName = "local"
)

// namePattern keeps names usable as user ids and conversation keys: no ':' and no spaces.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9._@-]{1,64}$`)

// refPattern matches the Outbox's message ids (newMessageID).
var refPattern = regexp.MustCompile(`^[0-9a-f]{16}$`)

func userName(r *http.Request) string {
	if c, err := r.Cookie(userCookie); err == nil && namePattern.MatchString(c.Value) {
		return c.Value
	}
	return defaultName
}

func userID(name string) string { return Platform + ":" + name }

// chatAddress is a user's chat conversation: one per name, so the bot's replies to a person's
// commands and buttons appear on that person's chat page.
func chatAddress(name string) conversation.Address {
	return conversation.Address{Platform: Platform, ChannelID: name}
}

type chatPageData struct {
	Name     string
	User     string
	Messages []ChatMessage
	Error    string
}

func (s *Server) chatPage(w http.ResponseWriter, r *http.Request) {
	name := userName(r)
	msgs, err := s.outbox.Messages(r.Context(), chatAddress(name).ConversationID(), userID(name))
	if err != nil {
		s.fail(w, err)
		return
	}
	s.render(w, "chat.html", chatPageData{Name: name, User: userID(name), Messages: msgs})
}

// chatSend hands a typed message, or a clicked button's command, to the bot as the web user.
func (s *Server) chatSend(w http.ResponseWriter, r *http.Request) {
	text := strings.TrimSpace(r.PostFormValue("text"))
	ref := r.PostFormValue("ref")
	switch {
	case text == "":
		http.Error(w, "Type a message, such as /workflow run hello world.", http.StatusBadRequest)
		return
	case ref != "" && !refPattern.MatchString(ref):
		http.Error(w, "That button belongs to no message; reload the chat page.", http.StatusBadRequest)
		return
	}
	if err := s.cfg.Limits.Check(text); err != nil { // before the message is shown or handed on
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	name := userName(r)
	m := conversation.Message{Address: chatAddress(name), UserID: userID(name), UserName: name, Text: text, Direct: true}
	if ref != "" {
		m.Action = &conversation.Action{Ref: conversation.Ref{Address: m.Address, MessageID: ref}}
	}
	if m.Action == nil {
		// Sent is sent: a browser that navigates away right after pressing Send cancels the
		// request, and must not cancel the recording of what it sent.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), conversation.RecordTimeout)
		err := s.outbox.Said(ctx, m.Address, m.UserID, text)
		cancel()
		if err != nil {
			s.cfg.Log.Warn("web.chat_record_failed", zap.Error(err))
			http.Error(w, "The chat could not save your message; the database is not accepting writes. Try again in a moment.", http.StatusServiceUnavailable)
			return
		}
	}
	s.cfg.Handler.Handle(r.Context(), m)
	if r.Header.Get("X-Requested-With") == "threadflow" { // the page's script: no navigation needed
		w.WriteHeader(http.StatusNoContent)
		return
	}
	http.Redirect(w, r, "/chat", http.StatusSeeOther)
}

// chatName sets the name the browser talks as.
func (s *Server) chatName(w http.ResponseWriter, r *http.Request) {
	name := strings.TrimSpace(r.PostFormValue("name"))
	if !namePattern.MatchString(name) {
		http.Error(w, "Use 1 to 64 letters, digits, '.', '_', '@' or '-' for your name (it becomes the user id web:NAME).", http.StatusBadRequest)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: userCookie, Value: name, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode,
		Secure: r.TLS != nil, MaxAge: int((365 * 24 * time.Hour).Seconds())})
	http.Redirect(w, r, "/chat", http.StatusSeeOther)
}

// liveChat streams the user's conversation whenever its transcript changes, on any replica.
//
// This is the one place that decides how a page catches up: at every wake-up (a notification, or
// every reader woken after the PostgreSQL listener reconnected) the page's whole log is read from
// the database again and sent when its rendering differs from what the page shows. The wait is
// registered before the read, so a change committed during the read wakes the next turn; and as
// the page always gets the full log, a message is neither shown twice nor lost, whatever order
// replicas commit in.
func (s *Server) liveChat(w http.ResponseWriter, r *http.Request) {
	name := userName(r)
	conv, user := chatAddress(name).ConversationID(), userID(name)
	now := make(chan struct{})
	close(now)
	var changed <-chan struct{} = now // send the current messages at once
	shown := ""
	s.stream(w, r, func() <-chan struct{} { return changed }, func(ctx context.Context) (string, error) {
		changed = s.outbox.Changed(conv)
		msgs, err := s.outbox.Messages(ctx, conv, user)
		if err != nil {
			changed = after(s.cfg.Poll) // try again soon; stream logs the error
			return "", err
		}
		html, err := s.fragment("chat-log", msgs)
		if err != nil || html == shown {
			return "", errUnchanged(err)
		}
		shown = html
		return html, nil
	})
}

// errNothingNew tells stream that the view is as the page shows it: nothing to send.
var errNothingNew = errors.New("web: view unchanged")

func errUnchanged(err error) error {
	if err != nil {
		return err
	}
	return errNothingNew
}

// after returns a channel closed once d has passed.
func after(d time.Duration) <-chan struct{} {
	ch := make(chan struct{})
	time.AfterFunc(d, func() { close(ch) })
	return ch
}
