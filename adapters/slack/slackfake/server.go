// Package slackfake is a loopback fake of the Slack Web API and Socket Mode for tests. It serves the
// few Web API methods the bot calls (auth.test, apps.connections.open, chat.postMessage, chat.update,
// chat.postEphemeral, chat.getPermalink, conversations.history, conversations.replies,
// conversations.open, usergroups.users.list), checks tokens and Block Kit
// limits the way Slack does, keeps message metadata and returns it only to a read that asks for it
// (include_all_metadata), pushes Socket Mode envelopes (slash commands, mentions, thread messages,
// button clicks) to the connected bot, records their acks, and keeps the channel history as a person
// would see it.
package slackfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"threadflow/adapters/web/signin/signinfake"
	"threadflow/testkit/posthold"
)

// Credentials and identities the fake accepts and reports. A bot under test is configured with
// BotToken and AppToken; auth.test answers with BotUserID and BotID.
const (
	BotToken  = "xoxb-slackfake-bot-token"
	AppToken  = "xapp-slackfake-app-token"
	BotUserID = "UBOTFAKE01"
	BotID     = "BBOTFAKE01"
	TeamID    = "TFAKE0001"
	AppID     = "AFAKE0001"
)

// Message is one message as the channel shows it: its current state after any chat.update.
type Message struct {
	Channel  string
	TS       string
	ThreadTS string // empty for a top-level message
	User     string // the poster's user id; BotUserID for the bot
	Text     string
	Blocks   string // the Block Kit JSON as sent, empty when the message has none
	Buttons  []Button
	Edited   bool
	Metadata Metadata // as chat.postMessage (or a later chat.update) sent it; zero when none
}

// Metadata is a message's metadata: what an app attached for other apps (or itself) to read back.
type Metadata struct {
	EventType string
	Payload   map[string]any // event_payload as JSON decodes it (numbers are float64)
}

// Button is one Block Kit button of a message.
type Button struct {
	Label, Value, ActionID, Style string
}

// Server is the fake. All methods are safe for concurrent use.
type Server struct {
	t        testing.TB
	srv      *httptest.Server
	upgrader websocket.Upgrader

	mu          sync.Mutex
	changed     chan struct{} // closed and replaced on every state change, for WaitFor
	conn        *websocket.Conn
	replicas    bool                       // keep every connection (Replicas)
	conns       []*websocket.Conn          // with replicas: the open connections, in turn order
	turn        int                        // with replicas: the connection the next envelope tries first
	sentTo      map[string]*websocket.Conn // with replicas: where each envelope went last
	connections int
	pending     [][]byte // envelopes pushed while no bot was connected
	envelopes   map[string]*envelope
	acked       map[string]bool
	ackPayloads map[string]json.RawMessage // what an ack carried, by envelope id (a view submission's errors)
	triggers    map[string]bool            // trigger ids handed out with slash commands: true until used
	views       []View                     // modals opened with views.open
	messages    []*Message                 // posted by the bot through the Web API
	said        []*Message                 // written by people (the events the fake pushed), for the read methods
	posts       map[string]int
	ephemerals  map[string][]Message
	rateLimited int
	refuseAfter int           // chat.postMessage answers internal_error after this many more posts; -1: never
	loseAnswers int           // the next chat.postMessage calls that post, then answer 500 as if the answer was lost
	hold        posthold.Slot // the next chat.postMessage whose text matches waits, see HoldPost
	readError   string        // what conversations.history and .replies answer instead of messages; "" for messages
	reads       int           // conversations.history and .replies calls so far
	seq         int
	lastTS      int64 // microseconds of the last message timestamp handed out

	usergroups     map[string][]string // user group id -> member user ids (SetUserGroup)
	usergroupError string              // what usergroups.users.list answers instead; "" for members
	usergroupReads map[string]int
	noDMs          map[string]string // user id -> what conversations.open answers (NoDMs)

	signin *signinfake.Server // "Sign in with Slack" (signin.go)
}

// New starts a fake on a loopback port; it is closed when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{
		t:              t,
		changed:        make(chan struct{}),
		envelopes:      map[string]*envelope{},
		usergroups:     map[string][]string{},
		usergroupReads: map[string]int{},
		noDMs:          map[string]string{},
		acked:          map[string]bool{},
		ackPayloads:    map[string]json.RawMessage{},
		triggers:       map[string]bool{},
		posts:          map[string]int{},
		refuseAfter:    -1,
		ephemerals:     map[string][]Message{},
		signin:         signinfake.New(),
		// socketmode dials with Origin https://api.slack.com, which a loopback host never matches.
		upgrader: websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }},
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/api/", s.serveAPI)
	mux.HandleFunc("/socket", s.serveSocket)
	mux.HandleFunc("/response/", s.serveResponseURL)
	s.routeSignIn(mux)
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.close)
	return s
}

// URL is the Web API base URL, with the trailing "/api/" slack-go expects (SLACK_API_URL).
func (s *Server) URL() string { return s.srv.URL + "/api/" }

func (s *Server) close() {
	s.mu.Lock()
	if s.conn != nil {
		_ = s.conn.Close()
		s.conn = nil
	}
	for _, c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.srv.Close()
}

// notifyLocked wakes WaitFor; the caller holds s.mu.
func (s *Server) notifyLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// nextLocked returns a fresh sequence number; the caller holds s.mu.
func (s *Server) nextLocked() int {
	s.seq++
	return s.seq
}

// nextTSLocked returns a fresh, increasing Slack message timestamp: like Slack's, the time the
// message arrived (seconds.microseconds), so reads bounded by oldest and latest work as with Slack.
func (s *Server) nextTSLocked() string {
	s.nextLocked()
	s.lastTS = max(time.Now().UnixMicro(), s.lastTS+1)
	return fmt.Sprintf("%d.%06d", s.lastTS/1e6, s.lastTS%1e6)
}

// micros reads a Slack timestamp; ok is false for anything else.
func micros(ts string) (int64, bool) {
	sec, frac, _ := strings.Cut(ts, ".")
	if len(frac) > 6 {
		return 0, false
	}
	s, err := strconv.ParseInt(sec, 10, 64)
	if err != nil {
		return 0, false
	}
	f := int64(0)
	if frac != "" {
		if f, err = strconv.ParseInt(frac+strings.Repeat("0", 6-len(frac)), 10, 64); err != nil {
			return 0, false
		}
	}
	return s*1e6 + f, true
}

// Messages returns every message posted or updated in channel through the Web API, oldest first.
func (s *Server) Messages(channel string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Message
	for _, m := range s.messages {
		if m.Channel == channel {
			out = append(out, m.clone())
		}
	}
	return out
}

// Posts counts the messages chat.postMessage created in channel: in the thread threadTS, or at the
// top level of the channel (thread roots included) when threadTS is empty. A test asserts with it
// that a message was posted exactly once.
func (s *Server) Posts(channel, threadTS string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.posts[channel+"/"+threadTS]
}

// Replicas makes the fake keep every Socket Mode connection, as Slack does for an app that runs
// several processes: each envelope goes to one of them in turn, and those a connection had not
// acknowledged when it closed (its process was killed) go to another, as Slack retries an event
// nobody acknowledged. Call it before a bot connects.
func (s *Server) Replicas() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.replicas, s.sentTo = true, map[string]*websocket.Conn{}
}

// Reads counts the conversations.history and conversations.replies calls so far: what Slack rate
// limits hardest.
func (s *Server) Reads() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.reads
}

// Ephemerals returns the ephemeral messages shown to user, oldest first.
func (s *Server) Ephemerals(user string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Message, 0, len(s.ephemerals[user]))
	for _, m := range s.ephemerals[user] {
		out = append(out, m.clone())
	}
	return out
}

// Acked reports whether the bot acknowledged the envelope.
func (s *Server) Acked(envelopeID string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.acked[envelopeID]
}

// Connections counts the Socket Mode connections the bot has opened so far.
func (s *Server) Connections() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.connections
}

// Connected reports whether a bot holds an open Socket Mode connection.
func (s *Server) Connected() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conn != nil || len(s.conns) > 0
}

// RateLimitNext makes the next n chat.postMessage calls answer 429 with Retry-After: 1.
func (s *Server) RateLimitNext(n int) { setLocked(&s.mu, &s.rateLimited, n) }

// RefusePostsAfter makes chat.postMessage accept n more messages and then answer internal_error
// (as Slack does in an outage) until it is called with n < 0: a bot that stops in the middle of a
// long reply.
func (s *Server) RefusePostsAfter(n int) { setLocked(&s.mu, &s.refuseAfter, n) }

// LoseNextAnswers makes the next n chat.postMessage calls post their message and then answer 500,
// as when the connection breaks after Slack accepted a message: the bot cannot tell it was posted.
func (s *Server) LoseNextAnswers(n int) { setLocked(&s.mu, &s.loseAnswers, n) }

// HoldPost makes the next chat.postMessage whose text contains sub wait until release is called
// (or the test ends): with posted, the message is already in the channel while its answer waits,
// as when a bot dies after Slack accepted a message and before it heard so; without, it is posted
// only on release, and only if the bot still waits for it, as when a bot dies before its request
// reached Slack. arrived is closed once such a post came in.
func (s *Server) HoldPost(sub string, posted bool) (arrived <-chan struct{}, release func()) {
	return s.hold.Set(s.t, sub, posted)
}

// FailReads makes conversations.history and conversations.replies answer the Slack error code
// (such as missing_scope, for an app installed without a history scope) until it is called with "".
func (s *Server) FailReads(code string) { setLocked(&s.mu, &s.readError, code) }

// WaitFor polls cond until it holds, re-checking on every change of the fake and at a short interval
// (cond may also look at state outside the fake). It fails the test with a dump of every message
// when timeout passes first.
func (s *Server) WaitFor(t testing.TB, timeout time.Duration, cond func(s *Server) bool) {
	t.Helper()
	deadline := time.NewTimer(timeout)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		s.mu.Lock()
		changed := s.changed
		s.mu.Unlock()
		if cond(s) {
			return
		}
		select {
		case <-changed:
		case <-tick.C:
		case <-deadline.C:
			t.Fatalf("slackfake: condition not met within %v; state:\n%s", timeout, s.Dump())
		}
	}
}

// Dump renders every message, ephemeral and envelope ack, for failure messages.
func (s *Server) Dump() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	for _, m := range s.messages {
		fmt.Fprintf(&b, "%s\n", m.describe())
	}
	users := make([]string, 0, len(s.ephemerals))
	for u := range s.ephemerals {
		users = append(users, u)
	}
	sort.Strings(users)
	for _, u := range users {
		for _, m := range s.ephemerals[u] {
			fmt.Fprintf(&b, "ephemeral to %s: %s\n", u, m.describe())
		}
	}
	fmt.Fprintf(&b, "connections=%d connected=%v pending=%d acked=%d/%d\n",
		s.connections, s.conn != nil, len(s.pending), len(s.acked), len(s.envelopes))
	return b.String()
}

func (m *Message) clone() Message {
	c := *m
	c.Buttons = append([]Button(nil), m.Buttons...)
	return c
}

func (m *Message) describe() string {
	where := m.Channel
	if m.ThreadTS != "" {
		where += " thread " + m.ThreadTS
	}
	s := fmt.Sprintf("[%s ts %s by %s edited=%v] %q", where, m.TS, m.User, m.Edited, m.Text)
	if m.Metadata.EventType != "" {
		s += fmt.Sprintf(" [metadata %s %v]", m.Metadata.EventType, m.Metadata.Payload)
	}
	for _, b := range m.Buttons {
		s += fmt.Sprintf(" [button %q -> %q]", b.Label, b.Value)
	}
	return s
}

// setLocked stores v in *field while holding mu: what the setters of the fake's behaviour do.
func setLocked[T any](mu *sync.Mutex, field *T, v T) {
	mu.Lock()
	defer mu.Unlock()
	*field = v
}
