package conversation

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"threadflow/db"
	"threadflow/db/dbtest"
)

// refusingKeeper is the real store refusing to keep anything, as a database that is down does.
type refusingKeeper struct {
	db.Store
	err error
}

func (k refusingKeeper) KeepInbound(context.Context, []db.KeptEvent) ([]bool, error) {
	return nil, k.err
}

// recorder is a Handler that records the texts it saw per conversation and how many ran at once.
// A handler may be held at its start by gate(text) until release.
type recorder struct {
	mu      sync.Mutex
	cond    *sync.Cond
	seen    map[string][]string // conversation id -> texts in handling order
	running int
	maxRun  int
	held    map[string]chan struct{} // text -> channel closed to let its handler return
	onCtx   func(ctx context.Context, m Message)
}

func newRecorder() *recorder {
	r := &recorder{seen: make(map[string][]string), held: make(map[string]chan struct{})}
	r.cond = sync.NewCond(&r.mu)
	return r
}

func (r *recorder) hold(text string) chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := make(chan struct{})
	r.held[text] = c
	return c
}

func (r *recorder) Handle(ctx context.Context, m Message) {
	r.mu.Lock()
	r.running++
	r.maxRun = max(r.maxRun, r.running)
	r.seen[m.ConversationID()] = append(r.seen[m.ConversationID()], m.Text)
	gate := r.held[m.Text]
	r.cond.Broadcast()
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.running--
		r.cond.Broadcast()
		r.mu.Unlock()
	}()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
		}
	}
	if r.onCtx != nil {
		r.onCtx(ctx, m)
	}
}

// waitFor blocks until cond (evaluated under the recorder's lock) holds, failing the test after a
// generous deadline instead of hanging.
func (r *recorder) waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	timer := time.AfterFunc(10*time.Second, func() {
		r.mu.Lock()
		defer r.mu.Unlock()
		r.cond.Broadcast()
	})
	defer timer.Stop()
	deadline := time.Now().Add(10 * time.Second)
	r.mu.Lock()
	defer r.mu.Unlock()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		r.cond.Wait()
	}
}

func (r *recorder) texts(conv string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.seen[conv]...)
}

// wantHandled fails the test unless the handler saw n messages in conv; why says why n.
func (r *recorder) wantHandled(t *testing.T, conv string, n int, why string) {
	t.Helper()
	if got := r.texts(conv); len(got) != n {
		t.Fatalf("handled %q in %s, want %d: %s", got, conv, n, why)
	}
}

func newTestInbox(t *testing.T, h Handler, d Keeper, workers int) *Inbox {
	t.Helper()
	in := NewInbox(h, d, workers, zaptest.NewLogger(t))
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = in.Close(ctx)
	})
	return in
}

func msg(channel string, text string) Message {
	return Message{Address: Address{Platform: "test", ChannelID: channel}, Text: text}
}

func submit(t *testing.T, in *Inbox, m Message) {
	t.Helper()
	ok, err := in.Submit(context.Background(), m)
	if err != nil || !ok {
		t.Fatalf("Submit(%q) = %v, %v; want accepted", m.Text, ok, err)
	}
}

func waitIdle(t *testing.T, in *Inbox) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := in.Idle(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestInboxKeepsOrderWhileOtherConversationsProgress(t *testing.T) {
	t.Parallel()
	rec := newRecorder()
	in := newTestInbox(t, rec, nil, 4)
	release := rec.hold("a0")
	for i := range 200 {
		submit(t, in, msg("A", fmt.Sprintf("a%d", i)))
	}
	for i := range 20 {
		submit(t, in, msg(fmt.Sprintf("B%d", i%5), fmt.Sprintf("b%d", i)))
	}
	// Conversation A is stuck on its first message; the others must still be handled meanwhile.
	// (Waiting for A's first to have started too: on a busy machine its worker may start last.)
	rec.waitFor(t, "the other conversations, and A's first", func() bool {
		n := 0
		for i := range 5 {
			n += len(rec.seen["test:B"+fmt.Sprint(i)])
		}
		return n == 20 && len(rec.seen["test:A"]) > 0
	})
	if got := rec.texts("test:A"); len(got) != 1 {
		t.Fatalf("conversation A handled %d messages while its first was still running", len(got))
	}
	close(release)
	waitIdle(t, in)
	got := rec.texts("test:A")
	if len(got) != 200 {
		t.Fatalf("conversation A handled %d messages, want 200", len(got))
	}
	for i, text := range got {
		if text != fmt.Sprintf("a%d", i) {
			t.Fatalf("conversation A message %d was %q: out of order", i, text)
		}
	}
}

func TestInboxBoundsConcurrentHandlers(t *testing.T) {
	t.Parallel()
	const workers = 3
	rec := newRecorder()
	in := newTestInbox(t, rec, nil, workers)
	var gates []chan struct{}
	for i := range 12 {
		text := fmt.Sprintf("m%d", i)
		gates = append(gates, rec.hold(text))
		submit(t, in, msg(fmt.Sprintf("C%d", i), text))
	}
	rec.waitFor(t, "all workers busy", func() bool { return rec.running == workers })
	for _, g := range gates {
		close(g)
	}
	waitIdle(t, in)
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if rec.maxRun != workers {
		t.Fatalf("at most %d handlers ran at once, want exactly %d (the bound)", rec.maxRun, workers)
	}
}

func TestInboxHandlesDuplicateEventsOnce(t *testing.T) {
	t.Parallel()
	rec := newRecorder()
	in := newTestInbox(t, rec, dbtest.SQLite(t, db.Options{}), 2)
	m := msg("C", "/workflow run deploy")
	m.EventID = "Ev1"
	submit(t, in, m)
	for range 3 {
		ok, err := in.Submit(context.Background(), m)
		if err != nil || ok {
			t.Fatalf("Submit of a redelivered event = %v, %v; want not accepted, no error", ok, err)
		}
	}
	other := m
	other.Platform = "other" // the same event id on another platform is another event
	submit(t, in, other)
	noID := msg("C", "typed in the terminal") // no event id: never de-duplicated
	submit(t, in, noID)
	submit(t, in, noID)
	waitIdle(t, in)
	rec.wantHandled(t, "test:C", 3, "the event once and the id-less message twice")
	rec.wantHandled(t, "other:C", 1, "once on the other platform")
}

func TestInboxDeduperFailureQueuesNothing(t *testing.T) {
	t.Parallel()
	rec := newRecorder()
	boom := errors.New("database down")
	in := newTestInbox(t, rec, refusingKeeper{Store: dbtest.SQLite(t, db.Options{}), err: boom}, 1)
	m := msg("C", "x")
	m.EventID = "Ev1"
	ok, err := in.Submit(context.Background(), m)
	if ok || !errors.Is(err, boom) {
		t.Fatalf("Submit = %v, %v; want not accepted and the deduper's error", ok, err)
	}
	waitIdle(t, in)
	rec.wantHandled(t, "test:C", 0, "the event could not be recorded")
}

func TestInboxCloseDrainsQueuedWork(t *testing.T) {
	t.Parallel()
	rec := newRecorder()
	in := NewInbox(rec, nil, 2, zaptest.NewLogger(t))
	for i := range 50 {
		submit(t, in, msg(fmt.Sprintf("C%d", i%3), fmt.Sprint(i)))
	}
	if err := in.Close(context.Background()); err != nil {
		t.Fatalf("Close: %v", err)
	}
	n := 0
	for i := range 3 {
		n += len(rec.texts(fmt.Sprintf("test:C%d", i)))
	}
	if n != 50 {
		t.Fatalf("Close returned after %d of 50 messages", n)
	}
	if ok, err := in.Submit(context.Background(), msg("C0", "late")); ok || !errors.Is(err, ErrClosed) {
		t.Fatalf("Submit after Close = %v, %v; want ErrClosed", ok, err)
	}
}

func TestInboxCloseGivesUpWhenContextEnds(t *testing.T) {
	t.Parallel()
	rec := newRecorder()
	cancelled := make(chan struct{})
	rec.onCtx = func(ctx context.Context, m Message) {
		if m.Text == "stuck" && ctx.Err() != nil {
			close(cancelled)
		}
	}
	in := NewInbox(rec, nil, 1, zaptest.NewLogger(t))
	rec.hold("stuck")
	submit(t, in, msg("C", "stuck"))
	submit(t, in, msg("C", "never"))
	submit(t, in, msg("D", "never either"))
	rec.waitFor(t, "the stuck handler", func() bool { return rec.running == 1 })

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	err := in.Close(ctx)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Close = %v, want context.Canceled", err)
	}
	<-cancelled // the running handler saw its context cancelled
	waitIdle(t, in)
	rec.wantHandled(t, "test:C", 1, "only the stuck message, after Close gave up")
	rec.wantHandled(t, "test:D", 0, "nothing queued after Close gave up")
}

func TestInboxSurvivesHandlerPanic(t *testing.T) {
	t.Parallel()
	rec := newRecorder()
	rec.onCtx = func(_ context.Context, m Message) {
		if m.Text == "boom" {
			panic("handler bug")
		}
	}
	in := newTestInbox(t, rec, nil, 1)
	submit(t, in, msg("C", "boom"))
	submit(t, in, msg("C", "after"))
	waitIdle(t, in)
	if got := rec.texts("test:C"); len(got) != 2 || got[1] != "after" {
		t.Fatalf("handled %q, want the message after the panic too", got)
	}
}

func TestInboxForgetsEmptyConversations(t *testing.T) {
	t.Parallel()
	in := newTestInbox(t, newRecorder(), nil, 4)
	for i := range 20000 {
		submit(t, in, msg(fmt.Sprint("C", i), "x"))
	}
	waitIdle(t, in)
	in.mu.Lock()
	defer in.mu.Unlock()
	if len(in.queues) != 0 || len(in.ready) != 0 {
		t.Fatalf("%d queues and %d ready entries left after every message was handled", len(in.queues), len(in.ready))
	}
}
