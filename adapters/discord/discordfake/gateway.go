package discordfake

import (
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/gorilla/websocket"
)

// Gateway opcodes used by the fake.
const (
	opDispatch     = 0
	opHeartbeat    = 1
	opIdentify     = 2
	opResume       = 6
	opHello        = 10
	opHeartbeatAck = 11
)

// heartbeatMillis is long enough that no heartbeat is due during a test, short enough to be real.
const heartbeatMillis = 41250

type frame struct {
	Op int             `json:"op"`
	D  json.RawMessage `json:"d,omitempty"`
	S  int64           `json:"s,omitempty"`
	T  string          `json:"t,omitempty"`
}

// ResumePath is where READY's resume_gateway_url points: a path of its own, so the fake can tell
// a client that resumes there (as Discord asks) from one that resumes on the URL it first got.
const ResumePath = "/resume-gateway"

// Connection is one gateway connection as the fake saw it: the URL path the client dialled and
// the opcode it opened the session with (IDENTIFY for a fresh session, RESUME to continue one).
type Connection struct {
	Path    string
	Resumed bool // the client sent RESUME (op 6) rather than IDENTIFY (op 2)
}

// session is one connected gateway client.
type session struct {
	conn       *websocket.Conn
	path       string
	writeMu    sync.Mutex
	seq        int64
	identified atomic.Bool
	closeOnce  sync.Once
}

func (ss *session) ready() bool { return ss.identified.Load() }

func (ss *session) close() { ss.closeOnce.Do(func() { _ = ss.conn.Close() }) }

// send writes one frame; dispatches get the next sequence number.
func (ss *session) send(op int, event string, d any) error {
	raw, err := json.Marshal(d)
	if err != nil {
		return err
	}
	ss.writeMu.Lock()
	defer ss.writeMu.Unlock()
	f := frame{Op: op, D: raw, T: event}
	if op == opDispatch {
		ss.seq++
		f.S = ss.seq
	}
	return ss.conn.WriteJSON(f)
}

var upgrader = websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}

func (s *Server) serveGateway(w http.ResponseWriter, r *http.Request) {
	conn, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // Upgrade already answered the client
	}
	ss := &session{conn: conn, path: strings.TrimSuffix(r.URL.Path, "/")}
	s.mu.Lock()
	s.sessions[ss] = struct{}{}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		delete(s.sessions, ss)
		s.mu.Unlock()
		ss.close()
	}()
	if ss.send(opHello, "", map[string]int{"heartbeat_interval": heartbeatMillis}) != nil {
		return
	}
	s.readFrames(ss)
}

// readFrames answers IDENTIFY with READY and heartbeats with ACKs until the connection ends.
func (s *Server) readFrames(ss *session) {
	for {
		var f frame
		if err := ss.conn.ReadJSON(&f); err != nil {
			return
		}
		var err error
		switch f.Op {
		case opIdentify:
			s.opened(ss, false)
			err = ss.send(opDispatch, "READY", readyPayload(ss.conn.LocalAddr().String()))
			ss.identified.Store(true)
		case opResume:
			s.opened(ss, true)
			err = ss.send(opDispatch, "RESUMED", map[string]any{})
			ss.identified.Store(true)
		case opHeartbeat:
			err = ss.send(opHeartbeatAck, "", nil)
		}
		if err != nil {
			return
		}
	}
}

// opened records how a connection started its session.
func (s *Server) opened(ss *session, resumed bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.connections = append(s.connections, Connection{Path: ss.path, Resumed: resumed})
}

// readyPayload is READY as Discord sends it, with the URL a client must resume on; host is the
// fake's own address.
func readyPayload(host string) map[string]any {
	return map[string]any{
		"v":                  10,
		"session_id":         "fake-session",
		"resume_gateway_url": "ws://" + host + ResumePath,
		"user":               botUser(),
		"application":        map[string]any{"id": AppID},
		"guilds":             []any{},
	}
}

func botUser() map[string]any {
	return map[string]any{"id": BotUserID, "username": "threadflow", "bot": true}
}

// dispatch sends an event to every identified session: like Discord with several replicas of a
// bot sharing one token, every replica receives every event.
func (s *Server) dispatch(event string, d any) {
	s.mu.Lock()
	targets := make([]*session, 0, len(s.sessions))
	for ss := range s.sessions {
		if ss.ready() {
			targets = append(targets, ss)
		}
	}
	s.mu.Unlock()
	for _, ss := range targets {
		_ = ss.send(opDispatch, event, d) // a session that went away simply misses the event
	}
}

// DropSessions closes every gateway connection without a close frame, as a network failure
// would; clients reconnect and resume.
func (s *Server) DropSessions() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for ss := range s.sessions {
		ss.close()
	}
}

// Connections returns every gateway connection that opened a session, oldest first.
func (s *Server) Connections() []Connection {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Connection(nil), s.connections...)
}
