package discord

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"

	"threadflow/adapters/discord/discordfake"
	"threadflow/conversation"
	"threadflow/testkit"
)

// handled is one message the handler saw, with the interaction answers present at that moment.
type handled struct {
	msg             conversation.Message
	responsesBefore []discordfake.Response
}

// recorder is a conversation.Handler that records what it is given.
type recorder struct {
	fake *discordfake.Server
	mu   sync.Mutex
	got  []handled
}

func (r *recorder) Handle(_ context.Context, m conversation.Message) {
	h := handled{msg: m, responsesBefore: r.fake.InteractionResponses(m.EventID)}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.got = append(r.got, h)
}

func (r *recorder) all() []handled {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]handled(nil), r.got...)
}

// waitEvent waits until the handler saw the event with id and returns it.
func (r *recorder) waitEvent(t *testing.T, id string) handled {
	t.Helper()
	var found handled
	r.fake.WaitFor(t, testkit.Deadline, func(*discordfake.Server) bool {
		for _, h := range r.all() {
			if h.msg.EventID == id {
				found = h
				return true
			}
		}
		return false
	})
	return found
}

// memClaimer is an in-memory Claimer shared by replicas, counting every attempt.
type memClaimer struct {
	mu       sync.Mutex
	claimed  map[string]bool
	attempts map[string]int
}

func newClaimer() *memClaimer {
	return &memClaimer{claimed: map[string]bool{}, attempts: map[string]int{}}
}

func (c *memClaimer) ClaimMessage(ctx context.Context, m conversation.Message) (bool, error) {
	return c.Claim(ctx, m.Platform, m.EventID)
}

func (c *memClaimer) Claim(_ context.Context, platform, id string) (bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	key := platform + "/" + id
	c.attempts[key]++
	first := !c.claimed[key]
	c.claimed[key] = true
	return first, nil
}

func (c *memClaimer) attemptsFor(id string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.attempts[Platform+"/"+id]
}

// stubAC suggests from fixed lists and records the conversation it was asked about.
type stubAC struct {
	mu   sync.Mutex
	conv conversation.Address
}

func (s *stubAC) WorkflowNames(_ context.Context, prefix string) []string {
	return filter([]string{"hello", "help-desk", "deploy"}, prefix)
}

func (s *stubAC) RunIDs(_ context.Context, conv conversation.Address, prefix string) []string {
	s.mu.Lock()
	s.conv = conv
	s.mu.Unlock()
	return filter([]string{"7k2m9x4q1c", "7zzzzzzzzz", "abc"}, prefix)
}

func filter(all []string, prefix string) []string {
	var out []string
	for _, v := range all {
		if strings.HasPrefix(v, prefix) {
			out = append(out, v)
		}
	}
	return out
}

// env is one adapter connected to a fake, with its recorder and logs.
type env struct {
	fake    *discordfake.Server
	adapter *Adapter
	rec     *recorder
	claimer *memClaimer
	ac      *stubAC
	logs    *observer.ObservedLogs
	stop    func()
}

// start connects a new adapter to fake; stop (also run at cleanup) ends Run and waits for every
// handler still running.
func start(t *testing.T, fake *discordfake.Server, cl *memClaimer, guilds ...string) *env {
	t.Helper()
	core, logs := observer.New(zap.DebugLevel)
	e := &env{fake: fake, rec: &recorder{fake: fake}, claimer: cl, ac: &stubAC{}, logs: logs}
	a, err := New(Config{BotToken: "test-token", AppID: discordfake.AppID, GuildIDs: guilds, APIURL: fake.URL(), Log: zap.New(core)}, e.rec, e.ac, cl)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	a.retry.base = time.Millisecond
	e.adapter = a
	before := fake.Sessions()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	var runErr error
	go func() {
		defer close(done)
		runErr = a.Run(ctx)
	}()
	var once sync.Once
	e.stop = func() {
		once.Do(func() {
			cancel()
			<-done
			if runErr != nil {
				t.Errorf("Run: %v", runErr)
			}
		})
	}
	t.Cleanup(e.stop)
	fake.WaitFor(t, testkit.Deadline, func(s *discordfake.Server) bool {
		select {
		case <-done:
			t.Fatalf("Run ended before connecting: %v", runErr)
		default:
		}
		return s.Sessions() > before
	})
	return e
}

// startThread starts a thread in channel 500 whose root says text, as a run's announcement does.
func (e *env) startThread(t *testing.T, text string) conversation.Address {
	t.Helper()
	thread, _, err := e.adapter.Outbox().StartThread(t.Context(), channel500, conversation.Reply{Text: conversation.T(conversation.P(text))})
	if err != nil {
		t.Fatalf("StartThread: %v", err)
	}
	return thread
}

func newEnv(t *testing.T) *env {
	t.Helper()
	return start(t, discordfake.New(t), newClaimer())
}

func kinds(rs []discordfake.Response) []string {
	out := make([]string, 0, len(rs))
	for _, r := range rs {
		out = append(out, r.Kind)
	}
	return out
}

func hasKind(kind string) func(rs []discordfake.Response) bool {
	return func(rs []discordfake.Response) bool {
		for _, r := range rs {
			if r.Kind == kind {
				return true
			}
		}
		return false
	}
}

// waitResponse waits until interaction id got an answer of kind and returns it.
func waitResponse(t *testing.T, fake *discordfake.Server, id, kind string) discordfake.Response {
	t.Helper()
	var got discordfake.Response
	fake.WaitFor(t, testkit.Deadline, func(s *discordfake.Server) bool {
		for _, r := range s.InteractionResponses(id) {
			if r.Kind == kind {
				got = r
				return true
			}
		}
		return false
	})
	return got
}
