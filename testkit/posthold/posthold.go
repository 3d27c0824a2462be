// Package posthold holds one post in a chat platform's fake (slackfake, discordfake) where a crash
// test needs it: before the platform takes it, or after it took it and before the bot hears so.
package posthold

import (
	"context"
	"strings"
	"sync"
	"testing"
)

// Hold is one held post.
type Hold struct {
	sub     string        // a part of the held post's text
	posted  bool          // the post is made before the wait: its answer is what waits
	arrived chan struct{} // closed when the post arrived
	release chan struct{} // closed by the test
}

// Slot keeps the next post a fake holds; its zero value holds nothing.
type Slot struct {
	mu sync.Mutex
	h  *Hold
}

// Set makes the next post whose text contains sub wait until release is called (or the test
// ends): with posted, the post is made while its answer waits, as when a bot dies after the
// platform accepted a message and before it heard so; without, it is made only on release and only
// if the bot still waits for it, as when a bot dies before its request reached the platform.
// arrived is closed once such a post came in.
func (s *Slot) Set(t testing.TB, sub string, posted bool) (arrived <-chan struct{}, release func()) {
	h := &Hold{sub: sub, posted: posted, arrived: make(chan struct{}), release: make(chan struct{})}
	s.mu.Lock()
	s.h = h
	s.mu.Unlock()
	var once sync.Once
	release = func() { once.Do(func() { close(h.release) }) }
	t.Cleanup(release)
	return h.arrived, release
}

// Take returns the hold a post of text meets, once; nil when it meets none.
func (s *Slot) Take(text string) *Hold {
	s.mu.Lock()
	defer s.mu.Unlock()
	h := s.h
	if h == nil || !strings.Contains(text, h.sub) {
		return nil
	}
	s.h = nil
	return h
}

// Before holds a post before it is made, when h holds it there, and reports whether the post may
// go on: false when the bot that sent it (the request's ctx) is gone by the release. A nil h
// holds nothing.
func (h *Hold) Before(ctx context.Context) bool {
	if h == nil || h.posted {
		return true
	}
	close(h.arrived)
	<-h.release
	return ctx.Err() == nil
}

// After holds the answer of a post after it is made, when h holds it there. A nil h holds
// nothing.
func (h *Hold) After() {
	if h != nil && h.posted {
		close(h.arrived)
		<-h.release
	}
}
