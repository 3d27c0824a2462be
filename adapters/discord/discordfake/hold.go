package discordfake

import (
	"context"
	"strings"
	"sync"
)

// hold is a message creation HoldPost waits for.
type hold struct {
	sub     string        // a part of the held message's content
	posted  bool          // the message is created before the wait: its answer is what waits
	arrived chan struct{} // closed when the post arrived
	release chan struct{} // closed by the test
}

// HoldPost makes the next channel message creation whose content contains sub wait until release
// is called (or the test ends): with posted, the message is already in its channel while the answer
// waits, as when a bot dies after Discord accepted a message and before it heard so; without, it is
// created only on release and only if the bot still waits for it, as when a bot dies before its
// request reached Discord. arrived is closed once such a post came in.
func (s *Server) HoldPost(sub string, posted bool) (arrived <-chan struct{}, release func()) {
	h := &hold{sub: sub, posted: posted, arrived: make(chan struct{}), release: make(chan struct{})}
	s.mu.Lock()
	s.hold = h
	s.mu.Unlock()
	var once sync.Once
	release = func() { once.Do(func() { close(h.release) }) }
	s.t.Cleanup(release)
	return h.arrived, release
}

// takeHold returns the hold a creation of content meets, once.
func (s *Server) takeHold(content string) *hold {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.hold
	if h == nil || !strings.Contains(content, h.sub) {
		return nil
	}
	s.hold = nil
	return h
}

// waitBefore holds a post h holds before it is created, and reports whether it may go on: false
// when the bot that sent it is gone by the release.
func (h *hold) waitBefore(ctx context.Context) bool {
	if h == nil || h.posted {
		return true
	}
	close(h.arrived)
	<-h.release
	return ctx.Err() == nil
}

// waitAfter holds the answer of a post h holds after it is created.
func (h *hold) waitAfter() {
	if h != nil && h.posted {
		close(h.arrived)
		<-h.release
	}
}
