package conversation

// Design of the Inbox.
//
// Ordering: every conversation (Message.ConversationID) has a FIFO queue. A conversation is either
// idle (no queue), waiting in the ready list, or owned by exactly one worker. A worker takes the
// first conversation from the ready list, handles ONE message of it, and puts it back at the end of
// the ready list if more are queued. So messages of one conversation are handled strictly in
// submission order (only one worker ever holds a conversation), busy conversations cannot starve the
// others (round robin), and at most `workers` handlers run at once (there are exactly that many
// worker goroutines). A queue is deleted as soon as it is empty, so memory follows the messages in
// flight, not the number of conversations ever seen.
//
// De-duplication: Submit records (platform, EventID) through the Deduper, in the database, BEFORE
// queueing. A redelivered event (Slack retries, Discord events reaching every replica, a restart
// mid-delivery) is therefore handled at most once, across processes and restarts. The price is that
// an event accepted just before a crash is not retried; the user sees no answer and types again,
// which is safer than a command acting twice. Messages without an EventID (the terminal) are not
// de-duplicated.

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"go.uber.org/zap"
)

// ErrClosed is returned by Submit after Close.
var ErrClosed = errors.New("conversation: inbox closed")

// Deduper records inbound platform events; db.Store satisfies it.
type Deduper interface {
	MarkInbound(ctx context.Context, platform, eventID string) (first bool, err error)
}

// Inbox feeds inbound messages to a Handler: ordered per conversation, parallel across
// conversations, bounded, de-duplicated. It is safe for concurrent use.
type Inbox struct {
	h   Handler
	d   Deduper
	log *zap.Logger

	mu      sync.Mutex
	wake    *sync.Cond
	queues  map[string]*convQueue // conversation id -> pending messages
	ready   []*convQueue          // conversations with messages and no worker, in turn order
	pending int                   // messages queued or being handled
	idle    chan struct{}         // closed when pending drops to zero
	closed  bool                  // no more Submits
	aborted bool                  // Close gave up: workers drop the queues and stop
	running map[*Message]context.CancelFunc
	done    chan struct{} // closed when every worker has returned
}

type convQueue struct {
	id    string
	items []Message
}

// NewInbox starts workers goroutines (at least one) that pass messages to h. d may be nil when the
// platform never redelivers (the terminal).
func NewInbox(h Handler, d Deduper, workers int, log *zap.Logger) *Inbox {
	in := &Inbox{
		h: h, d: d, log: log,
		queues:  make(map[string]*convQueue),
		running: make(map[*Message]context.CancelFunc),
		idle:    closedChan(),
		done:    make(chan struct{}),
	}
	in.wake = sync.NewCond(&in.mu)
	workers = max(workers, 1)
	var wg sync.WaitGroup
	wg.Add(workers)
	for range workers {
		go func() {
			defer wg.Done()
			in.work()
		}()
	}
	go func() {
		wg.Wait()
		close(in.done)
	}()
	return in
}

func closedChan() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// Submit de-duplicates m by (platform, EventID) and queues it. accepted is false for a duplicate
// event; err is ErrClosed after Close, or the Deduper's error (the message is then not queued, so the
// platform's redelivery can try again).
func (in *Inbox) Submit(ctx context.Context, m Message) (accepted bool, err error) {
	if in.isClosed() {
		return false, ErrClosed
	}
	if in.d != nil && m.EventID != "" {
		first, err := in.d.MarkInbound(ctx, m.Platform, m.EventID)
		if err != nil {
			return false, fmt.Errorf("conversation: record inbound event: %w", err)
		}
		if !first {
			in.log.Debug("conversation.inbound_duplicate", zap.String("platform", m.Platform), zap.String("event_id", m.EventID))
			return false, nil
		}
	}
	return in.enqueue(m)
}

func (in *Inbox) isClosed() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.closed
}

func (in *Inbox) enqueue(m Message) (bool, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed {
		return false, ErrClosed
	}
	id := m.ConversationID()
	q, ok := in.queues[id]
	if !ok {
		q = &convQueue{id: id}
		in.queues[id] = q
		in.ready = append(in.ready, q) // a new queue has no worker yet
		in.wake.Signal()
	}
	q.items = append(q.items, m)
	if in.pending == 0 {
		in.idle = make(chan struct{})
	}
	in.pending++
	return true, nil
}

// work is one worker's loop: take a ready conversation, handle its next message, repeat.
func (in *Inbox) work() {
	for {
		q, m, ok := in.take()
		if !ok {
			return
		}
		in.handle(m)
		in.finish(q)
	}
}

// take waits for a ready conversation and pops its first message; ok is false when the worker must
// stop.
func (in *Inbox) take() (*convQueue, *Message, bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	for len(in.ready) == 0 && !in.closed {
		in.wake.Wait()
	}
	if in.aborted || len(in.ready) == 0 {
		return nil, nil, false
	}
	q := in.ready[0]
	in.ready[0] = nil
	in.ready = in.ready[1:]
	m := q.items[0]
	q.items[0] = Message{}
	q.items = q.items[1:]
	return q, &m, true
}

// handle runs the handler with a context that Close cancels when it gives up waiting.
func (in *Inbox) handle(m *Message) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	in.mu.Lock()
	in.running[m] = cancel
	in.mu.Unlock()
	defer func() {
		in.mu.Lock()
		delete(in.running, m)
		in.mu.Unlock()
		if r := recover(); r != nil {
			// One bad message must not take the bot down; the handler's own logs say more.
			in.log.Error("conversation.handle_panicked", zap.String("conversation", m.ConversationID()), zap.Any("panic", r))
		}
	}()
	in.h.Handle(ctx, *m)
}

// finish hands the conversation back: to the end of the ready list, or deleted when empty.
func (in *Inbox) finish(q *convQueue) {
	in.mu.Lock()
	defer in.mu.Unlock()
	in.done1()
	switch {
	case in.aborted:
		in.drop(q)
	case len(q.items) == 0:
		delete(in.queues, q.id)
	default:
		in.ready = append(in.ready, q)
		in.wake.Signal()
	}
}

// done1 counts one message as finished; the caller holds mu.
func (in *Inbox) done1() {
	in.pending--
	if in.pending == 0 {
		close(in.idle)
	}
}

// drop discards the queued messages of q; the caller holds mu.
func (in *Inbox) drop(q *convQueue) {
	for range q.items {
		in.done1()
	}
	q.items = nil
	delete(in.queues, q.id)
}

// Idle waits until nothing is queued or being handled, or ctx ends.
func (in *Inbox) Idle(ctx context.Context) error {
	in.mu.Lock()
	idle := in.idle
	in.mu.Unlock()
	select {
	case <-idle:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("conversation: wait for idle inbox: %w", ctx.Err())
	}
}

// Close stops accepting messages and waits for the queued ones to be handled. When ctx ends first
// it gives up: queued messages are dropped, running handlers see their context cancelled, and the
// error wraps ctx.Err().
func (in *Inbox) Close(ctx context.Context) error {
	in.mu.Lock()
	in.closed = true
	in.wake.Broadcast()
	in.mu.Unlock()
	select {
	case <-in.done:
		return nil
	case <-ctx.Done():
	}
	in.mu.Lock()
	in.aborted = true
	dropped := in.pending - len(in.running) // including queues behind running handlers, dropped in finish
	for _, q := range in.ready {
		in.drop(q)
	}
	in.ready = nil
	for _, cancel := range in.running {
		cancel()
	}
	in.mu.Unlock()
	in.log.Warn("conversation.inbox_close_abandoned", zap.Int("dropped", dropped))
	return fmt.Errorf("conversation: close inbox: %d queued messages dropped: %w", dropped, ctx.Err())
}
