package maintenance

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"

	"threadflow/conversation"
	"threadflow/db"
	"threadflow/orchestrator/execution"
)

// Delivery policy of owed messages.
const (
	// courierParallel is how many claimed messages (db.MaxOwedBatch at most per claim, each the
	// next of a different run) are delivered at a time.
	courierParallel = 8
	// defaultClaimTTL is how long a claimed message is this courier's (Courier.ClaimTTL): a courier
	// that died holding it lets it go after this. A delivery is bounded by three quarters of it, so
	// no other courier takes it while it may still be posted.
	defaultClaimTTL = 2 * time.Minute
	// minClaimTTL bounds ClaimTTL from below: a delivery gets at least 3.75 s, what a platform
	// slow to answer may take.
	minClaimTTL = 5 * time.Second
	// claimTimeout bounds one claim's statement.
	claimTimeout = 10 * time.Second
	// A platform failure is retried after retryFirst, doubling up to retryMax, until
	// MaxDeliveryAttempts attempts failed (about 2 minutes of trying), then the message is failed;
	// attempts that only ran out of time keep trying until the message is maxOwedAge old.
	retryFirst          = time.Second
	retryMax            = 5 * time.Minute
	MaxDeliveryAttempts = 8
	maxOwedAge          = time.Hour
)

// Courier delivers what runs owe (the outbox): it claims owed messages of runs in reach, posts them
// through the adapter Outbox of their platform and records what it posted, so whichever replica
// holds a run, or any replica for a run nobody holds, gets its messages out once. A message whose
// earlier attempt may have posted it (db.OutboxEntry.InDoubt) is looked up first on platforms that
// can (conversation.Finder); elsewhere posting it again with its key posts it once.
type Courier struct {
	Store    Store
	Outboxes map[string]conversation.Outbox
	Log      *zap.Logger
	Observe  execution.Observer
	Owner    string // this process (REPLICA_ID): whose claims are whose
	// Presence limits delivery to runs this process reports on (nil: every run of a connected
	// platform).
	Presence *Presence
	// Interval is the longest sleep between looks: messages owed by a replica that died are found
	// within it. Messages owed here wake the courier at once (Wake). Default 5s.
	Interval time.Duration
	// ClaimTTL is how long a claimed message is this courier's (at least minClaimTTL); default 2
	// minutes. The engine sets twice LEASE_TTL: a message a dead replica claimed is delivered about
	// when its runs are taken over.
	ClaimTTL time.Duration
	Now      func() time.Time

	wakeOnce sync.Once
	wake     chan struct{}
}

// Wake makes the courier look now: something became owed. Safe on a nil Courier.
func (c *Courier) Wake() {
	if c == nil {
		return
	}
	select {
	case c.wakeChan() <- struct{}{}:
	default:
	}
}

func (c *Courier) wakeChan() chan struct{} {
	c.wakeOnce.Do(func() { c.wake = make(chan struct{}, 1) })
	return c.wake
}

// Run delivers until ctx ends.
func (c *Courier) Run(ctx context.Context) {
	loop(ctx, c.wakeChan(), func(ctx context.Context) { c.Once(ctx) }, c.sleep)
}

func (c *Courier) claimTTL() time.Duration {
	if c.ClaimTTL <= 0 {
		return defaultClaimTTL
	}
	return max(c.ClaimTTL, minClaimTTL)
}

// reach is which runs' messages this courier delivers: those of runs it reports on, on platforms
// it is connected to. A server executes the runs of terminals that are gone (Reach.Unattended) but
// cannot print to them: their messages wait for a terminal that attaches again.
func (c *Courier) reach() (db.Reach, bool) {
	r, ok := c.Presence.Reach()
	if !ok || len(c.Outboxes) == 0 {
		return db.Reach{}, false
	}
	if len(r.Conversations) > 0 { // a terminal: its own conversations
		return r, true
	}
	connected := func(ps []string) []string {
		var out []string
		for _, p := range ps {
			if c.Outboxes[p] != nil {
				out = append(out, p)
			}
		}
		return out
	}
	platforms := r.Platforms
	if len(platforms) == 0 {
		for p := range c.Outboxes {
			platforms = append(platforms, p)
		}
		slices.Sort(platforms)
	}
	r.Platforms, r.Unattended = connected(platforms), connected(r.Unattended)
	return r, !r.Every()
}

// sleep is how long to wait for the next owed message to be due, at most Interval.
func (c *Courier) sleep(ctx context.Context) time.Duration {
	interval := c.Interval
	if interval <= 0 {
		interval = 5 * time.Second
	}
	reach, ok := c.reach()
	if !ok {
		return interval
	}
	next, ok, err := c.Store.NextOwed(ctx, reach)
	if err != nil || !ok {
		return interval
	}
	return min(max(next.Sub(c.now()), 0), interval)
}

func (c *Courier) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// Once delivers every message due now, a run's in order, and returns how many it delivered.
func (c *Courier) Once(ctx context.Context) int {
	reach, ok := c.reach()
	if !ok {
		return 0
	}
	delivered := 0
	for ctx.Err() == nil {
		// A claim is not cancelled half way: one that committed while its caller stopped listening
		// would hold its messages back from every courier until it expires.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), claimTimeout)
		es, err := c.Store.ClaimOwed(cctx, c.Owner, c.claimTTL(), reach, db.MaxOwedBatch)
		cancel()
		if err != nil {
			if ctx.Err() == nil {
				c.Log.Warn("orchestrator.outbox_claim_failed", zap.Error(err))
			}
			return delivered
		}
		if len(es) == 0 {
			return delivered
		}
		var (
			wg  sync.WaitGroup
			mu  sync.Mutex
			sem = make(chan struct{}, courierParallel)
		)
		for _, e := range es {
			sem <- struct{}{}
			wg.Go(func() {
				defer func() { <-sem }()
				// A claimed message is delivered even if shutdown began: its claim would hold it
				// back from every other courier until it expires.
				dctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), c.claimTTL()*3/4)
				defer cancel()
				if c.deliver(dctx, e) {
					mu.Lock()
					delivered++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
	}
	return delivered
}

// Drain delivers what runs in reach owe until nothing is owed or ctx ends, waiting for a message
// held back by a retry or by the claim of a courier that died (a terminal killed by the run it
// executed): what a process owes its conversations goes out before it ends, when it can.
func (c *Courier) Drain(ctx context.Context) {
	for {
		c.Once(ctx)
		reach, ok := c.reach()
		if !ok {
			return
		}
		next, ok, err := c.Store.NextOwed(ctx, reach)
		if err != nil || !ok {
			return
		}
		t := time.NewTimer(max(next.Sub(c.now()), 0) + time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		}
	}
}

// deliver posts one claimed message and records the outcome; it reports whether it was delivered.
func (c *Courier) deliver(ctx context.Context, e db.OutboxEntry) bool {
	log := c.Log.With(zap.String("run_id", e.RunID), zap.String("kind", e.Kind), zap.Int64("outbox_id", e.ID), zap.Int("attempt", e.Attempts))
	d, err := c.send(ctx, e)
	// The outcome is recorded even when the attempt used up its time.
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), claimTimeout)
	defer cancel()
	if err == nil {
		d.RunID, d.Key, d.Version, d.Owner = e.RunID, e.Key, e.Version, c.Owner
		if err := c.Store.DeliveredOwed(rctx, d); err != nil {
			// Posted, but not recorded: the next attempt finds it (in doubt) instead of posting again.
			log.Warn("orchestrator.outbox_unrecorded", zap.Error(err))
			return false
		}
		log.Debug("orchestrator.outbox_delivered")
		return true
	}
	r := db.Retry{RunID: e.RunID, Key: e.Key, Version: e.Version, Owner: c.Owner, Error: err.Error()}
	var nc notConnected
	switch {
	case errors.As(err, &nc):
		// Another process may be connected to it (a terminal attaching again): not a failure.
		r.At, r.Error = c.now().Add(time.Minute), e.LastError
	case errors.Is(err, conversation.ErrRefused):
		r.Fail = true
	case e.Attempts >= MaxDeliveryAttempts && (ctx.Err() == nil || c.now().Sub(e.CreatedAt) > maxOwedAge):
		// An attempt that ran out of its own time (the adapter pacing a busy channel, a platform
		// slow to answer) is not the platform refusing: it is tried for up to maxOwedAge.
		r.Fail = true
	default:
		r.At = c.now().Add(RetryWait(e.Attempts))
	}
	if rerr := c.Store.RetryOwed(rctx, r); rerr != nil {
		log.Warn("orchestrator.outbox_unrecorded", zap.Error(rerr))
		return false
	}
	if r.Fail {
		execution.ObserverOr(c.Observe).OutboxFailed(e.Kind)
		log.Warn("orchestrator.outbox_failed", zap.Error(err))
		return false
	}
	log.Info("orchestrator.outbox_retrying", zap.Time("next_attempt_at", r.At), zap.Error(err))
	return false
}

// RetryWait is how long after failed attempt n (from 1) a message is tried again.
func RetryWait(n int) time.Duration {
	if n < 1 {
		n = 1
	}
	if n > 20 {
		return retryMax
	}
	return min(retryFirst<<(n-1), retryMax)
}

// notConnected is a message of a platform this process has no adapter for.
type notConnected string

func (n notConnected) Error() string {
	return "platform " + string(n) + " is not connected to this process"
}

// send delivers e to its platform: it opens the run's thread, posts in it, or edits one of the
// run's recorded messages, as e's target says.
func (c *Courier) send(ctx context.Context, e db.OutboxEntry) (db.Delivery, error) {
	run, err := c.Store.GetRun(ctx, e.RunID)
	if err != nil {
		return db.Delivery{}, fmt.Errorf("read run: %w", err)
	}
	if run, err = c.inParentsThread(ctx, run); err != nil {
		return db.Delivery{}, err
	}
	var rep conversation.Reply
	if e.Target != db.TargetDirect { // a direct message is read by direct
		if err := json.Unmarshal(e.Reply, &rep); err != nil {
			return db.Delivery{}, fmt.Errorf("%w: the owed reply does not decode: %v", conversation.ErrRefused, err)
		}
	}
	platform, channel, thread, ok := db.ParseConversationKey(run.ConversationID)
	if !ok {
		return db.Delivery{}, fmt.Errorf("%w: run has no conversation", conversation.ErrRefused)
	}
	ob := c.Outboxes[platform]
	if ob == nil {
		return db.Delivery{}, notConnected(platform)
	}
	rep.RunID = run.ID // the transcript records which run a message is about
	// Only a message an earlier attempt may have posted is looked for (post, open): a first try is
	// posted at once, sparing Slack's rate-limited reads.
	rep.FirstAttempt = !e.InDoubt()
	at := conversation.Address{Platform: platform, ChannelID: channel, ThreadID: thread}
	var d db.Delivery
	if e.Target == db.TargetDirect {
		d, err = c.direct(ctx, ob, at, e)
	} else {
		d, err = c.sendTo(ctx, ob, at, e, rep)
	}
	if err != nil {
		execution.ObserverOr(c.Observe).SendFailed(platform)
	}
	return d, err
}

// inParentsThread is a child run moved into its parent's conversation when it is not there yet:
// a child created while its parent's announcement was being delivered may have been left where
// the parent was before its thread opened. A child's messages wait for that announcement
// (db.firstOwed), so by now the parent is where it stays, and nothing of the child was said
// elsewhere.
func (c *Courier) inParentsThread(ctx context.Context, run db.Run) (db.Run, error) {
	if run.ParentRunID == "" {
		return run, nil
	}
	p, err := c.Store.GetRun(ctx, run.ParentRunID)
	if err != nil {
		return run, fmt.Errorf("read parent run: %w", err)
	}
	if p.ConversationID == "" || p.ConversationID == run.ConversationID {
		return run, nil
	}
	if err := c.Store.SetRunConversation(ctx, run.ID, p.ConversationID); err != nil {
		return run, fmt.Errorf("move child run into its parent's thread: %w", err)
	}
	run.ConversationID = p.ConversationID
	return run, nil
}

// sendTo delivers e through ob; at is the run's conversation.
func (c *Courier) sendTo(ctx context.Context, ob conversation.Outbox, at conversation.Address, e db.OutboxEntry, rep conversation.Reply) (db.Delivery, error) {
	switch e.Target {
	case db.TargetOpen:
		return c.open(ctx, ob, at, e, rep)
	case db.TargetLive, db.TargetEdit:
		ref, found, err := c.recorded(ctx, e.RunID, e.Ref)
		if err != nil {
			return db.Delivery{}, err
		}
		if found {
			rep.Key = ""
			if err := ob.Edit(ctx, ref, rep); err != nil {
				return db.Delivery{}, err
			}
			return db.Delivery{Message: messageRef(ref)}, nil
		}
		if e.Target == db.TargetEdit {
			return db.Delivery{}, nil // the message was never posted: there is nothing to edit
		}
	}
	ref, err := c.post(ctx, ob, at, e, rep)
	if err != nil {
		return db.Delivery{}, err
	}
	return db.Delivery{Message: messageRef(ref), Events: mentioned(e, rep)}, nil
}

// post posts rep at to, unless an earlier attempt did.
func (c *Courier) post(ctx context.Context, ob conversation.Outbox, to conversation.Address, e db.OutboxEntry, rep conversation.Reply) (conversation.Ref, error) {
	if f, ok := ob.(conversation.Finder); ok && e.InDoubt() {
		ref, found, err := f.Find(ctx, to, e.Key)
		if err != nil {
			return conversation.Ref{}, fmt.Errorf("look for an earlier post: %w", err)
		}
		if found {
			return ref, nil
		}
	}
	return ob.Post(ctx, to, rep)
}

// open opens the run's thread with rep, unless an earlier attempt did, and records the thread as
// the run's conversation.
func (c *Courier) open(ctx context.Context, ob conversation.Outbox, in conversation.Address, e db.OutboxEntry, rep conversation.Reply) (db.Delivery, error) {
	var (
		thread conversation.Address
		ref    conversation.Ref
		found  bool
		err    error
	)
	if f, ok := ob.(conversation.Finder); ok && e.InDoubt() {
		if thread, ref, found, err = f.FindThread(ctx, in, e.Key); err != nil {
			return db.Delivery{}, fmt.Errorf("look for an earlier announcement: %w", err)
		}
	}
	if !found {
		if thread, ref, err = ob.StartThread(ctx, in, rep); err != nil {
			return db.Delivery{}, err
		}
	}
	d := db.Delivery{Message: messageRef(ref)}
	if thread == in {
		return d, nil
	}
	ch := thread.Channel()
	d.Conversations = []db.Conversation{{ID: ch.ConversationID(), Platform: ch.Platform, ChannelID: ch.ChannelID}}
	if thread.ThreadID != "" {
		d.Conversations = append(d.Conversations, db.Conversation{ID: thread.ConversationID(), Platform: thread.Platform,
			ChannelID: thread.ChannelID, ThreadID: thread.ThreadID, ParentID: ch.ConversationID()})
	}
	return d, nil
}

// recorded is the run's message of kind, when one is recorded.
func (c *Courier) recorded(ctx context.Context, runID, kind string) (conversation.Ref, bool, error) {
	refs, err := c.Store.MessageRefs(ctx, runID)
	if err != nil {
		return conversation.Ref{}, false, fmt.Errorf("read the run's messages: %w", err)
	}
	for _, m := range refs {
		if m.Kind == kind {
			return conversation.Ref{Address: conversation.Address{Platform: m.Platform, ChannelID: m.ChannelID, ThreadID: m.ThreadID},
				MessageID: m.MessageID}, true, nil
		}
	}
	return conversation.Ref{}, false, nil
}

// messageRef is the stored form of a posted message; its run and kind are the outbox row's.
func messageRef(ref conversation.Ref) db.MessageRef {
	return db.MessageRef{Platform: ref.Platform, ChannelID: ref.ChannelID, ThreadID: ref.ThreadID, MessageID: ref.MessageID}
}
