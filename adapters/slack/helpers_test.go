package slack

import (
	"context"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"threadflow/adapters/slack/slackfake"
	"threadflow/conversation"
	"threadflow/testkit"
)

// recorder is a conversation.Handler that keeps every message; when gate is set, Handle blocks on
// it after recording, to show what happens while a handler is still busy.
type recorder struct {
	mu   sync.Mutex
	msgs []conversation.Message
	gate chan struct{}
}

func (r *recorder) Handle(ctx context.Context, m conversation.Message) {
	r.mu.Lock()
	r.msgs = append(r.msgs, m)
	gate := r.gate
	r.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
		}
	}
}

func (r *recorder) messages() []conversation.Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]conversation.Message(nil), r.msgs...)
}

// waitMessages waits until the recorder holds n messages and returns them.
func (r *recorder) waitMessages(t *testing.T, fake *slackfake.Server, n int) []conversation.Message {
	t.Helper()
	fake.WaitFor(t, testkit.Deadline, func(*slackfake.Server) bool { return len(r.messages()) >= n })
	return r.messages()
}

// newAdapter builds an adapter against fake, with retry waits shortened for tests.
func newAdapter(t *testing.T, fake *slackfake.Server, h conversation.Handler) *Adapter {
	t.Helper()
	a, err := New(Config{BotToken: slackfake.BotToken, AppToken: slackfake.AppToken, APIURL: fake.URL(),
		Log: zaptest.NewLogger(t)}, h)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	a.out.send.backoff = func(int) time.Duration { return time.Millisecond }
	return a
}

// startAdapter runs an adapter against a new fake until the test ends, once it is connected.
func startAdapter(t *testing.T) (*slackfake.Server, *recorder, *Adapter) {
	t.Helper()
	fake := slackfake.New(t)
	rec := &recorder{}
	a := newAdapter(t, fake, rec)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- a.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run returned %v after cancel, want nil", err)
			}
		case <-time.After(testkit.Deadline):
			t.Errorf("Run did not return after its context ended")
		}
	})
	fake.WaitFor(t, testkit.Deadline, func(s *slackfake.Server) bool { return s.Connected() })
	return fake, rec, a
}

// botPosts waits until channel holds n messages posted through the Web API and returns them.
func botPosts(t *testing.T, fake *slackfake.Server, channel string, n int) []slackfake.Message {
	t.Helper()
	fake.WaitFor(t, testkit.Deadline, func(s *slackfake.Server) bool { return len(s.Messages(channel)) >= n })
	return fake.Messages(channel)
}
