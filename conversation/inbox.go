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
// Keeping: Submit records (platform, EventID) through the Keeper, in the database, BEFORE queueing,
// with the message itself and this Inbox's claim on it. A redelivered event (Slack retries, Discord
// events reaching every replica, a restart mid-delivery) is therefore handled at most once while it
// is held, across processes and restarts. The event is kept until its handler returns; the Inbox
// renews its claims every third of their life (Keep). If the process dies first, the claim lapses
// and another Inbox of the platform, in this process after a restart or in another replica, takes
// the message over and handles it (Message.Recovered): a request accepted just before a crash is
// answered, not lost. Handlers make what a request does idempotent (a run's id derives from the
// event), because a handler that finished just before the crash is handed the message again.
// Messages without an EventID (the terminal) are neither kept nor de-duplicated.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.uber.org/zap"

	"threadflow/db"
)

// ErrClosed is returned by Submit after Close.
var ErrClosed = errors.New("conversation: inbox closed")

// MinClaim is the shortest claim an Inbox holds on the events it keeps: renewals every third of it
// must not keep the database busy, and a slow commit must not let another process take an event
// its holder is still handling.
const MinClaim = 5 * time.Second

// ClaimFor is how long an Inbox's claim on a kept event holds without renewal, for a bot whose
// run leases last leaseTTL: twice as long (a process that missed one renewal still holds its
// events), and at least MinClaim.
func ClaimFor(leaseTTL time.Duration) time.Duration { return max(2*leaseTTL, MinClaim) }

// maxTakeOver bounds the lapsed events one claim of a Keep pass takes over; a full batch is
// followed at once by another.
const maxTakeOver = 32

// InboxOption configures an Inbox.
type InboxOption func(*Inbox)

// defaultClaim is an Inbox's claim unless WithClaim says: ClaimFor the default LEASE_TTL.
var defaultClaim = ClaimFor(30 * time.Second)

// WithClaim sets how long the Inbox's claim on a kept event holds without renewal (ClaimFor).
func WithClaim(d time.Duration) InboxOption {
	return func(in *Inbox) { in.claim = max(d, MinClaim) }
}

// Inbox feeds inbound messages to a Handler: ordered per conversation, parallel across
// conversations, bounded, kept until handled. It is safe for concurrent use.
type Inbox struct {
	h     Handler
	k     Keeper
	log   *zap.Logger
	owner string        // this Inbox's claim on the events it keeps: fresh per start
	claim time.Duration // how long a claim holds unless renewed

	mu      sync.Mutex
	wake    *sync.Cond
	queues  map[string]*convQueue // conversation id -> pending messages
	ready   []*convQueue          // conversations with messages and no worker, in turn order
	pending int                   // messages queued or being handled
	idle    chan struct{}         // closed when pending drops to zero
	closed  bool                  // no more Submits
	aborted bool                  // Close gave up: workers drop the queues and stop
	running map[*item]context.CancelFunc
	done    chan struct{}            // closed when every worker has returned
	claimed map[db.InboundEvent]bool // recorded by Claim, not submitted yet: whether kept
	held    int                      // kept events this Inbox holds: Keep renews their claims
}

type convQueue struct {
	id    string
	items []item
}

// item is a queued message, and whether its event is kept until it is handled.
type item struct {
	Message
	kept bool
}

// NewInbox starts workers goroutines (at least one) that pass messages to h. k may be nil when the
// platform never redelivers (the terminal): nothing is then kept or de-duplicated.
func NewInbox(h Handler, k Keeper, workers int, log *zap.Logger, opts ...InboxOption) *Inbox {
	in := &Inbox{
		h: h, k: k, log: log, owner: db.NewToken(), claim: defaultClaim,
		queues:  make(map[string]*convQueue),
		running: make(map[*item]context.CancelFunc),
		claimed: make(map[db.InboundEvent]bool),
		idle:    closedChan(),
		done:    make(chan struct{}),
	}
	for _, o := range opts {
		o(in)
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

// Submit keeps m's event with m, de-duplicated by (platform, EventID), and queues it. accepted is
// false for a duplicate event; err is ErrClosed after Close, or the Keeper's error (the message is
// then not queued, so the platform's redelivery can try again). A message whose event this Inbox
// recorded already through Claim is queued without being recorded again.
func (in *Inbox) Submit(ctx context.Context, m Message) (accepted bool, err error) {
	if in.isClosed() {
		return false, ErrClosed
	}
	kept := false
	if in.k != nil && m.EventID != "" {
		var claimed bool
		if kept, claimed = in.takeClaimed(m); !claimed {
			first, k, err := in.keep(ctx, m)
			if err != nil {
				return false, err
			}
			if !first {
				in.log.Debug("conversation.inbound_duplicate", zap.String("platform", m.Platform), zap.String("event_id", m.EventID))
				return false, nil
			}
			kept = k
		}
	}
	return in.enqueue(item{Message: m, kept: kept})
}

// Claim records m's event with m, as Submit does, without queueing it: first is whether this Inbox
// is the first to record it, and then the caller must Submit m. A platform that delivers every event
// to every replica (Discord) claims before it answers the platform, so only one replica answers.
func (in *Inbox) Claim(ctx context.Context, m Message) (first bool, err error) {
	if in.k == nil || m.EventID == "" {
		return true, nil
	}
	first, kept, err := in.keep(ctx, m)
	if err != nil || !first {
		return false, err
	}
	in.mu.Lock()
	in.claimed[event(m)] = kept
	in.mu.Unlock()
	return true, nil
}

// takeClaimed reports whether m's event was recorded by Claim, and whether it was kept.
func (in *Inbox) takeClaimed(m Message) (kept, claimed bool) {
	in.mu.Lock()
	defer in.mu.Unlock()
	kept, claimed = in.claimed[event(m)]
	delete(in.claimed, event(m))
	return kept, claimed
}

func event(m Message) db.InboundEvent {
	return db.InboundEvent{Platform: m.Platform, EventID: m.EventID}
}

// keep records m's event with m under this Inbox's claim. A message too large to keep (more than
// db.MaxKeptMessage encoded) is recorded for de-duplication only, as every event was before
// messages were kept: kept is false.
func (in *Inbox) keep(ctx context.Context, m Message) (first, kept bool, err error) {
	e := db.KeptEvent{InboundEvent: event(m), Owner: in.owner, TTL: in.claim}
	msg, err := json.Marshal(m)
	switch {
	case err != nil || len(msg) > db.MaxKeptMessage:
		in.log.Warn("conversation.inbound_not_kept", zap.String("platform", m.Platform), zap.String("event_id", m.EventID),
			zap.Int("bytes", len(msg)), zap.Error(err))
	default:
		e.Message = msg
	}
	got, err := in.k.KeepInbound(ctx, []db.KeptEvent{e})
	if err != nil {
		return false, false, fmt.Errorf("conversation: record inbound event: %w", err)
	}
	kept = got[0] && e.Message != nil
	if kept {
		in.mu.Lock()
		in.held++
		in.mu.Unlock()
	}
	return got[0], kept, nil
}

func (in *Inbox) isClosed() bool {
	in.mu.Lock()
	defer in.mu.Unlock()
	return in.closed
}

func (in *Inbox) enqueue(m item) (bool, error) {
	in.mu.Lock()
	defer in.mu.Unlock()
	if in.closed {
		return false, ErrClosed // a kept event stays kept: another Inbox takes it over
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
		in.handled(m)
		in.finish(q)
	}
}

// take waits for a ready conversation and pops its first message; ok is false when the worker must
// stop.
func (in *Inbox) take() (*convQueue, *item, bool) {
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
	q.items[0] = item{}
	q.items = q.items[1:]
	return q, &m, true
}

// handle runs the handler with a context that Close cancels when it gives up waiting.
func (in *Inbox) handle(m *item) {
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
	in.h.Handle(ctx, m.Message)
}

// handled records that m's kept event was handled, so it is kept no longer. If that write fails
// the event is taken over once its claim lapses and handled again, which handlers allow.
func (in *Inbox) handled(m *item) {
	if !m.kept {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), writeTimeout)
	defer cancel()
	if err := in.k.HandledInbound(ctx, []db.InboundEvent{event(m.Message)}); err != nil {
		in.log.Warn("conversation.inbound_handled_unrecorded", zap.String("platform", m.Platform), zap.String("event_id", m.EventID), zap.Error(err))
	}
	in.mu.Lock()
	in.held--
	in.mu.Unlock()
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
