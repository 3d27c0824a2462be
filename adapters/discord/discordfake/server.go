// Package discordfake is a loopback fake of Discord's REST API and gateway for tests. It speaks
// enough of both for a discordgo client: the gateway handshake (HELLO, IDENTIFY, READY with its
// resume_gateway_url, RESUME, heartbeats) and dispatches, application command registration,
// interaction callbacks and webhook followups, channel messages with edits and nonces (enforce_nonce
// returns the message a nonce made), and threads started from messages (with the message's id).
// Tests drive it as users would (slash commands, mentions, thread replies, button clicks) and read
// back what users would see, and how many messages were created.
package discordfake

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"threadflow/adapters/web/signin/signinfake"
	"threadflow/testkit/posthold"
)

// Server is one fake Discord. Its zero value is not usable; call New.
type Server struct {
	t      testing.TB
	http   *httptest.Server
	signin *signinfake.Server // signing in with Discord (signin.go)

	mu           sync.Mutex
	nextID       int64
	channels     map[string]channel
	messages     map[string][]*Message // by channel id, in creation order
	threads      []Thread
	interactions map[string]interaction // by id
	responses    map[string][]Response  // by interaction id
	commands     map[string][]byte      // by scope: "global" or a guild id; the raw PUT body
	sessions     map[*session]struct{}
	profiles     map[string]Profile // by user id
	connections  []Connection
	posts        map[string]int  // messages created, by channel id (a thread is a channel)
	nonces       map[string]sent // the bot's messages by their nonce, for enforce_nonce
	failSends    int
	loseAnswers  int
	hold         posthold.Slot // the next message creation whose content matches waits, see HoldPost
	unhandled    []string
	denyMembers  bool            // List Guild Members answers 403 (DenyMemberList)
	memberReads  int             // List Guild Members pages read
	noDMs        map[string]bool // users whose DM channel refuses the bot's messages (NoDMs)
	// callbackDeadline is how long after dispatch an interaction accepts its callback;
	// CallbackDeadline except in the fake's own tests.
	callbackDeadline time.Duration
}

type channel struct {
	ID, GuildID, ParentID string
	Type                  int    // 0 guild text, 1 DM, 11 public thread
	Recipient             string // a DM's user
}

// sent is a message created with a nonce, and when.
type sent struct {
	m  *Message
	at time.Time
}

// MaxNonce is the longest nonce Discord accepts, in characters; a longer one is a 400.
const MaxNonce = 25

// NonceWindow is how long the fake remembers a nonce for enforce_nonce. Discord documents "the
// past few minutes" and no figure; the fake keeps two minutes, and ForgetNonces ends the window at
// once.
const NonceWindow = 2 * time.Minute

type interaction struct {
	ID, Token, ChannelID string
	Sent                 time.Time // when the fake dispatched it; the callback deadline runs from here
}

// CallbackDeadline is how long Discord waits for an interaction's callback: later, the token is
// unknown and the user sees "The application did not respond". The fake enforces it the same way.
const CallbackDeadline = 3 * time.Second

// New starts a fake on a loopback port and stops it when the test ends.
func New(t testing.TB) *Server {
	t.Helper()
	s := &Server{
		t:            t,
		nextID:       1000,
		channels:     map[string]channel{},
		messages:     map[string][]*Message{},
		interactions: map[string]interaction{},
		responses:    map[string][]Response{},
		commands:     map[string][]byte{},
		sessions:     map[*session]struct{}{},
		profiles:     map[string]Profile{},
		posts:        map[string]int{},
		nonces:       map[string]sent{},
		noDMs:        map[string]bool{},

		callbackDeadline: CallbackDeadline,
		signin:           signinfake.New(),
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/gateway", s.serveGateway)
	mux.HandleFunc("/gateway/", s.serveGateway) // discordgo adds a slash before the query
	mux.HandleFunc(ResumePath, s.serveGateway)
	mux.HandleFunc(ResumePath+"/", s.serveGateway)
	mux.HandleFunc("/api/", s.serveREST)
	s.routeSignIn(mux)
	s.http = httptest.NewServer(mux)
	t.Cleanup(s.close)
	return s
}

// URL is the base URL a bot is pointed at (DISCORD_API_URL).
func (s *Server) URL() string { return s.http.URL }

func (s *Server) close() {
	s.mu.Lock()
	for ss := range s.sessions {
		ss.close()
	}
	s.mu.Unlock()
	s.http.Close()
}

// id returns a fresh snowflake-like id. Callers hold s.mu.
func (s *Server) id() string {
	s.nextID++
	return strconv.FormatInt(s.nextID, 10)
}

// channelLocked returns the channel with id, creating a guild text channel for an id never seen:
// tests name channels freely. Callers hold s.mu.
func (s *Server) channelLocked(id string) channel {
	c, ok := s.channels[id]
	if !ok {
		c = channel{ID: id, GuildID: GuildID}
		s.channels[id] = c
	}
	return c
}

// SetProfile gives user a username, global display name and guild nickname, sent with everything
// the user does from now on.
func (s *Server) SetProfile(user string, p Profile) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.profiles[user] = p
}

// profileLocked returns user's profile; callers hold s.mu.
func (s *Server) profileLocked(user string) Profile {
	p, ok := s.profiles[user]
	if !ok || p.Username == "" {
		p.Username = "user" + user
	}
	return p
}

// FailNextSends makes the next n channel message creations answer 500, to exercise retries.
func (s *Server) FailNextSends(n int) { setLocked(&s.mu, &s.failSends, n) }

// LoseNextAnswers makes the next n channel message creations create their message and then answer
// 502, as when the connection breaks after Discord accepted it.
func (s *Server) LoseNextAnswers(n int) { setLocked(&s.mu, &s.loseAnswers, n) }

// ForgetNonces ends the enforce_nonce window of every message sent so far, as if minutes passed:
// the same nonce then creates a new message, as on Discord.
func (s *Server) ForgetNonces() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.nonces)
}

// Posts counts the messages created in channel (a thread is a channel) through REST: a create
// answered with an earlier message (enforce_nonce) does not count. A test asserts with it that a
// message was posted exactly once.
func (s *Server) Posts(channel string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.posts[channel]
}

// Messages returns copies of the messages of a channel (a thread is a channel), oldest first.
func (s *Server) Messages(channel string) []Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Message, 0, len(s.messages[channel]))
	for _, m := range s.messages[channel] {
		c := *m
		c.Buttons = append([]Button(nil), m.Buttons...)
		out = append(out, c)
	}
	return out
}

// BotMessages returns the messages of a channel written by the bot.
func (s *Server) BotMessages(channel string) []Message {
	var out []Message
	for _, m := range s.Messages(channel) {
		if m.Author == BotUserID {
			out = append(out, m)
		}
	}
	return out
}

// Threads returns the threads started so far, oldest first.
func (s *Server) Threads() []Thread {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Thread(nil), s.threads...)
}

// InteractionResponses returns the answers to one interaction in the order they arrived.
func (s *Server) InteractionResponses(id string) []Response {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Response(nil), s.responses[id]...)
}

// InteractionSent returns when the fake dispatched an interaction; zero for an unknown id. Compare
// it with the Response.At of the answers.
func (s *Server) InteractionSent(id string) time.Time {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.interactions[id].Sent
}

// Commands returns the raw JSON body of the last application command overwrite for a scope:
// "global" or a guild id; nil when none arrived.
func (s *Server) Commands(scope string) []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]byte(nil), s.commands[scope]...)
}

// Sessions returns the number of gateway sessions that completed IDENTIFY and are still open.
func (s *Server) Sessions() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for ss := range s.sessions {
		if ss.ready() {
			n++
		}
	}
	return n
}

// WaitFor polls cond until it holds or timeout passes; then it fails the test with a dump of
// everything the fake saw.
func (s *Server) WaitFor(t testing.TB, timeout time.Duration, cond func(*Server) bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond(s) {
		if time.Now().After(deadline) {
			t.Fatalf("discordfake: condition not met within %v; state:\n%s", timeout, s.Dump())
		}
		time.Sleep(5 * time.Millisecond) // polling interval, not a wait for work
	}
}

// Dump describes the fake's state for failure messages.
func (s *Server) Dump() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var b strings.Builder
	ids := make([]string, 0, len(s.messages))
	for id := range s.messages {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		fmt.Fprintf(&b, "channel %s:\n", id)
		for _, m := range s.messages[id] {
			fmt.Fprintf(&b, "  %s by %s: %q buttons=%v none=%v nonce=%q\n", m.ID, m.Author, m.Content, m.Buttons, m.AllowedMentionsNone, m.Nonce)
		}
	}
	for _, th := range s.threads {
		fmt.Fprintf(&b, "thread %+v\n", th)
	}
	for id, rs := range s.responses {
		fmt.Fprintf(&b, "interaction %s: %+v\n", id, rs)
	}
	for _, u := range s.unhandled {
		fmt.Fprintf(&b, "unhandled request: %s\n", u)
	}
	return b.String()
}

// setLocked stores v in *field while holding mu: what the setters of the fake's behaviour do.
func setLocked[T any](mu *sync.Mutex, field *T, v T) {
	mu.Lock()
	defer mu.Unlock()
	*field = v
}
