package slackfake

import (
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/gorilla/websocket"
)

// pingInterval keeps the bot's dead-connection detector (30s by default in socketmode) satisfied,
// as Slack's own pings do.
const pingInterval = 2 * time.Second

// envelope is one Socket Mode message carrying an event to the bot.
type envelope struct {
	EnvelopeID             string          `json:"envelope_id"`
	Type                   string          `json:"type"`
	Payload                json.RawMessage `json:"payload"`
	AcceptsResponsePayload bool            `json:"accepts_response_payload"`
	RetryAttempt           int             `json:"retry_attempt"`
	RetryReason            string          `json:"retry_reason"`
}

// push wraps payload in a new envelope of the given type, delivers it and returns its id.
func (s *Server) push(typ string, payload any) string {
	raw, err := json.Marshal(payload)
	if err != nil {
		s.t.Fatalf("slackfake: encoding %s payload: %v", typ, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	env := &envelope{
		EnvelopeID:             fmt.Sprintf("env-%06d", s.nextLocked()),
		Type:                   typ,
		Payload:                raw,
		AcceptsResponsePayload: typ != "events_api",
	}
	s.envelopes[env.EnvelopeID] = env
	s.deliverLocked(env)
	return env.EnvelopeID
}

// Redeliver sends an envelope again with its retry_attempt increased, as Slack does when an ack is
// late or lost.
func (s *Server) Redeliver(envelopeID string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	env, ok := s.envelopes[envelopeID]
	if !ok {
		s.t.Fatalf("slackfake: Redeliver of unknown envelope %q", envelopeID)
		return
	}
	again := *env
	env.RetryAttempt++
	again.RetryAttempt = env.RetryAttempt
	again.RetryReason = "timeout"
	s.deliverLocked(&again)
}

// deliverLocked writes env to the connected bot, or queues it until one connects.
func (s *Server) deliverLocked(env *envelope) {
	raw, err := json.Marshal(env)
	if err != nil {
		s.t.Fatalf("slackfake: encoding envelope: %v", err)
	}
	if s.replicas {
		for range s.conns {
			c := s.conns[s.turn%len(s.conns)]
			s.turn++
			if writeTo(c, raw) == nil {
				s.sentTo[env.EnvelopeID] = c
				return
			}
		}
		s.pending = append(s.pending, raw)
		return
	}
	if s.conn == nil || s.writeLocked(raw) != nil {
		s.pending = append(s.pending, raw)
	}
}

func writeTo(c *websocket.Conn, raw []byte) error {
	_ = c.SetWriteDeadline(time.Now().Add(5 * time.Second))
	return c.WriteMessage(websocket.TextMessage, raw)
}

// detachReplica forgets a closed connection and sends the envelopes it had not acknowledged to
// another (Replicas).
func (s *Server) detachReplica(conn *websocket.Conn) {
	for i, c := range s.conns {
		if c == conn {
			s.conns = append(s.conns[:i], s.conns[i+1:]...)
			break
		}
	}
	for id, c := range s.sentTo {
		if c != conn {
			continue
		}
		delete(s.sentTo, id)
		if env := s.envelopes[id]; env != nil && !s.acked[id] {
			env.RetryAttempt++
			again := *env
			again.RetryReason = "timeout"
			s.deliverLocked(&again)
		}
	}
	s.notifyLocked()
}

func (s *Server) writeLocked(raw []byte) error {
	_ = s.conn.SetWriteDeadline(time.Now().Add(5 * time.Second))
	return s.conn.WriteMessage(websocket.TextMessage, raw)
}

// DropConnection closes the bot's websocket without a close handshake, like a network failure;
// the bot must reconnect through apps.connections.open.
func (s *Server) DropConnection() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conn != nil {
		_ = s.conn.Close()
		s.conn = nil
		s.notifyLocked()
	}
}

func (s *Server) serveSocket(w http.ResponseWriter, r *http.Request) {
	conn, err := s.upgrader.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader already answered with an error status
	}
	if !s.attach(conn) {
		_ = conn.Close()
		return
	}
	done := make(chan struct{})
	go ping(conn, done)
	s.readAcks(conn)
	close(done)
	s.mu.Lock()
	if s.replicas {
		s.detachReplica(conn)
	}
	if s.conn == conn {
		s.conn = nil
		s.notifyLocked()
	}
	s.mu.Unlock()
}

// attach makes conn the bot's connection: it says hello and flushes envelopes queued meanwhile.
func (s *Server) attach(conn *websocket.Conn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.replicas {
		return s.attachReplica(conn)
	}
	if s.conn != nil {
		_ = s.conn.Close()
	}
	s.conn = conn
	s.connections++
	hello := fmt.Sprintf(`{"type":"hello","num_connections":1,"connection_info":{"app_id":%q},"debug_info":{"host":"slackfake"}}`, AppID)
	if err := s.writeLocked([]byte(hello)); err != nil {
		s.conn = nil
		return false
	}
	for len(s.pending) > 0 {
		if err := s.writeLocked(s.pending[0]); err != nil {
			break
		}
		s.pending = s.pending[1:]
	}
	s.notifyLocked()
	return true
}

// readAcks records every envelope id the bot acknowledges until the connection ends.
func (s *Server) readAcks(conn *websocket.Conn) {
	for {
		_, raw, err := conn.ReadMessage()
		if err != nil {
			return
		}
		var ack struct {
			EnvelopeID string          `json:"envelope_id"`
			Payload    json.RawMessage `json:"payload"`
		}
		if json.Unmarshal(raw, &ack) != nil || ack.EnvelopeID == "" {
			continue
		}
		s.mu.Lock()
		s.acked[ack.EnvelopeID] = true
		if len(ack.Payload) > 0 && string(ack.Payload) != "null" {
			s.ackPayloads[ack.EnvelopeID] = ack.Payload
		}
		s.notifyLocked()
		s.mu.Unlock()
	}
}

func ping(conn *websocket.Conn, done <-chan struct{}) {
	t := time.NewTicker(pingInterval)
	defer t.Stop()
	for {
		select {
		case <-done:
			return
		case <-t.C:
			// WriteControl may run concurrently with WriteMessage (gorilla documents it).
			if conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(time.Second)) != nil {
				return
			}
		}
	}
}

// attachReplica adds conn to the connections (Replicas), says hello and flushes what was queued.
func (s *Server) attachReplica(conn *websocket.Conn) bool {
	hello := fmt.Sprintf(`{"type":"hello","num_connections":%d,"connection_info":{"app_id":%q},"debug_info":{"host":"slackfake"}}`, len(s.conns)+1, AppID)
	if writeTo(conn, []byte(hello)) != nil {
		return false
	}
	s.conns = append(s.conns, conn)
	s.connections++
	pending := s.pending
	s.pending = nil
	for _, raw := range pending {
		if writeTo(conn, raw) != nil {
			s.pending = append(s.pending, raw)
		}
	}
	s.notifyLocked()
	return true
}
