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
	"threadflow/platform"
)

// The web user: a self-declared name kept in a cookie. It is who the orchestrator sees (web:NAME)
// for authorization (ALLOWED_USER_IDS, ADMIN_USER_IDS); the dashboard itself is protected by
// DASHBOARD_TOKEN.
const (
	userCookie  = "threadflow_user"
	defaultName = "local"
)

// threadsChannel is the web chat's shared channel: every run started on the chat page opens its
// thread there, and every web user reads and answers it, as in a Slack channel. People's own
// conversations are channels named after them; a name cannot contain '#' (namePattern), so no
// person's conversation is ever this one.
const threadsChannel = platform.WebRuns

// threadsIndex is the shared channel itself: its transcript holds the root message of every run
// thread, which is how the chat page lists them.
var threadsIndex = conversation.Address{Platform: Platform, ChannelID: threadsChannel}

// threadAddress is the run thread whose root message has the id thread.
func threadAddress(thread string) conversation.Address {
	return conversation.Address{Platform: Platform, ChannelID: threadsChannel, ThreadID: thread}
}

// namePattern keeps names usable as user ids and conversation keys: no ':' and no spaces.
var namePattern = regexp.MustCompile(`^[A-Za-z0-9._@-]{1,64}$`)

// refPattern matches the Outbox's message ids (newMessageID), which also name run threads.
var refPattern = regexp.MustCompile(`^[0-9a-f]{16}$`)

func userName(r *http.Request) string {
	if c, err := r.Cookie(userCookie); err == nil && namePattern.MatchString(c.Value) {
		return c.Value
	}
	return defaultName
}

func userID(name string) string { return Platform + ":" + name }

// chatAddress is a user's own conversation: one per name, so the bot's replies to a person's
// commands and buttons appear on that person's chat page, and nobody else's.
func chatAddress(name string) conversation.Address {
	return conversation.Address{Platform: Platform, ChannelID: name}
}

// chatLog is a conversation as a page shows it: its messages, and where their buttons send the
// command they stand for (the conversation's own composer, so a click is answered there).
type chatLog struct {
	Post     string
	Messages []ChatMessage
}

type chatPageData struct {
	Name    string
	User    string
	Viewer  viewer
	Log     chatLog
	Threads []ChatMessage // the newest run threads, newest first
}

func (s *Server) chatPage(w http.ResponseWriter, r *http.Request) {
	v := s.viewer(r)
	msgs, err := s.outbox.Messages(r.Context(), v.Chat.ConversationID(), v.ID)
	if err != nil {
		s.fail(w, err)
		return
	}
	threads, err := s.outbox.Threads(r.Context(), v.ID)
	if err != nil {
		s.fail(w, err)
		return
	}
	s.render(w, "chat.html", chatPageData{Name: v.Name, User: v.Label(), Viewer: v, Log: chatLog{Post: "/chat", Messages: msgs}, Threads: threads})
}

type threadPageData struct {
	Name   string
	User   string
	Viewer viewer
	Thread string
	RunID  string // the run the thread reports on
	Log    chatLog
}

// threadPage shows a run's thread to any web user, with a composer that answers in it.
func (s *Server) threadPage(w http.ResponseWriter, r *http.Request) {
	thread, v := r.PathValue("thread"), s.viewer(r)
	var msgs []ChatMessage
	var err error
	if refPattern.MatchString(thread) {
		msgs, err = s.outbox.Messages(r.Context(), threadAddress(thread).ConversationID(), v.ID)
	}
	if err != nil {
		s.fail(w, err)
		return
	}
	if len(msgs) == 0 {
		http.Error(w, noThread, http.StatusNotFound)
		return
	}
	data := threadPageData{Name: v.Name, User: v.Label(), Viewer: v, Thread: thread, Log: chatLog{Post: threadPath(thread), Messages: msgs}}
	for _, m := range msgs {
		if m.RunID != "" {
			data.RunID = m.RunID
			break
		}
	}
	s.render(w, "thread.html", data)
}

// noThread answers the address of a thread that does not exist.
const noThread = "No such thread. The chat page lists the run threads."

func threadPath(thread string) string { return "/chat/threads/" + thread }

// chatSend hands a typed message, or a clicked button's command, to the bot as the web user, in
// the person's own conversation.
func (s *Server) chatSend(w http.ResponseWriter, r *http.Request) {
	s.say(w, r, s.viewer(r).Chat, true, "/chat")
}

// threadSend hands a message typed (or a button clicked) in a run's thread to the bot. A thread is
// shared, so it is read as Slack and Discord read a reply in a run's thread: an answer to the gate
// the run waits at, or a command; anything else is talk between people, which the bot leaves alone.
func (s *Server) threadSend(w http.ResponseWriter, r *http.Request) {
	thread := r.PathValue("thread")
	if !refPattern.MatchString(thread) {
		http.Error(w, noThread, http.StatusNotFound)
		return
	}
	at := threadAddress(thread)
	rows, err := s.cfg.Store.Transcript(r.Context(), at.ConversationID(), 1)
	if err != nil {
		s.fail(w, err)
		return
	}
	if len(rows) == 0 { // only the bot opens threads
		http.Error(w, noThread, http.StatusNotFound)
		return
	}
	s.say(w, r, at, false, threadPath(thread))
}

// say records what the person typed in the conversation at and hands it to the bot; a button's
// command is handed on with the message that holds the button. direct says whether everything typed
// there is meant for the bot. back is the page to show afterwards, without the page's script.
func (s *Server) say(w http.ResponseWriter, r *http.Request, at conversation.Address, direct bool, back string) {
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
	v := s.viewer(r)
	if !s.mayAct(w, v) {
		return
	}
	m := conversation.Message{Address: at, UserID: v.ID, UserName: v.Name, Text: text, Direct: direct, Via: v.via()}
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
	http.Redirect(w, r, back, http.StatusSeeOther)
}

// chatName sets the name the browser talks as.
func (s *Server) chatName(w http.ResponseWriter, r *http.Request) {
	if s.cfg.SignIn != nil {
		http.Error(w, "This dashboard signs people in (/signin): you act as who you signed in as, and picking a name is not offered.", http.StatusForbidden)
		return
	}
	name := strings.TrimSpace(r.PostFormValue("name"))
	if !namePattern.MatchString(name) {
		http.Error(w, "Use 1 to 64 letters, digits, '.', '_', '@' or '-' for your name (it becomes the user id web:NAME).", http.StatusBadRequest)
		return
	}
	http.SetCookie(w, &http.Cookie{Name: userCookie, Value: name, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode,
		Secure: r.TLS != nil, MaxAge: int((365 * 24 * time.Hour).Seconds())})
	back := "/chat"
	if t := r.PostFormValue("thread"); refPattern.MatchString(t) {
		back = threadPath(t)
	}
	http.Redirect(w, r, back, http.StatusSeeOther)
}

// liveChat streams the person's own conversation.
func (s *Server) liveChat(w http.ResponseWriter, r *http.Request) {
	v := s.viewer(r)
	s.liveLog(w, r, v.Chat.ConversationID(), "chat-log", func(ctx context.Context) (any, error) {
		msgs, err := s.outbox.Messages(ctx, v.Chat.ConversationID(), v.ID)
		return chatLog{Post: "/chat", Messages: msgs}, err
	})
}

// liveThread streams a run's thread.
func (s *Server) liveThread(w http.ResponseWriter, r *http.Request) {
	thread, user := r.PathValue("thread"), s.viewer(r).ID
	if !refPattern.MatchString(thread) {
		http.Error(w, noThread, http.StatusNotFound)
		return
	}
	conv := threadAddress(thread).ConversationID()
	s.liveLog(w, r, conv, "chat-log", func(ctx context.Context) (any, error) {
		msgs, err := s.outbox.Messages(ctx, conv, user)
		return chatLog{Post: threadPath(thread), Messages: msgs}, err
	})
}

// liveThreads streams the list of run threads.
func (s *Server) liveThreads(w http.ResponseWriter, r *http.Request) {
	user := s.viewer(r).ID
	s.liveLog(w, r, threadsIndex.ConversationID(), "thread-list", func(ctx context.Context) (any, error) {
		return s.outbox.Threads(ctx, user)
	})
}

// liveLog streams a rendering of one conversation's transcript whenever it changes, on any replica.
//
// This is the one place that decides how a page catches up: at every wake-up (a notification, or
// every reader woken after the PostgreSQL listener reconnected) the view is read from the database
// again and sent when its rendering differs from what the page shows. The wait is registered
// before the read, so a change committed during the read wakes the next turn; and as the page
// always gets the full view, a message is neither shown twice nor lost, whatever order replicas
// commit in.
func (s *Server) liveLog(w http.ResponseWriter, r *http.Request, conv, block string, read func(ctx context.Context) (any, error)) {
	now := make(chan struct{})
	close(now)
	var changed <-chan struct{} = now // send the current view at once
	shown := ""
	s.stream(w, r, func() <-chan struct{} { return changed }, func(ctx context.Context) (string, error) {
		changed = s.outbox.Changed(conv)
		data, err := read(ctx)
		if err != nil {
			changed = after(s.cfg.Poll) // try again soon; stream logs the error
			return "", err
		}
		html, err := s.fragment(block, data)
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
