package main

import (
	"context"
	"fmt"
	"math"
	"sync"
	"time"

	"threadflow/conversation"
	"threadflow/db"
)

// dispatchWorkers is the bot's Inbox size per platform (cmd/bot inboxWorkers).
const dispatchWorkers = 256

// dispatchSamples is about how many messages are timed at each level of concurrency.
const dispatchSamples = 600

// dispatchRatio is issue 18's target: at 50 conversations p99, and at 500 conversations p50, under
// this many times the same percentile of the one-transaction floor measured in the same run.
const dispatchRatio = 3.0

const dispatchWorkflow = `name: bench-hello
nodes:
  - id: hello
    bash: "true"
`

// dispatch times `/workflow run bench-hello` from Inbox.Submit to the first Outbox call for its
// channel, through the Inbox (kept and de-duplicated in the database, as for Slack), the command
// parser, the dispatcher and the courier that posts the announcement, with 1, 50 and 500
// conversations sending at the same instant. The workers are not started: the runs stay queued, so
// the figure is the dispatch alone.
// The floor is one store transaction (MarkInbound, one INSERT) at the same concurrency.
func (b *bench) dispatch(ctx context.Context, d *database) ([]row, error) {
	r, err := newRig(ctx, d, map[string]string{"bench-hello": dispatchWorkflow})
	if err != nil {
		return nil, err
	}
	defer r.close()
	// The courier posts the announcement the run's creation owed (issue 27): the first Outbox call
	// for the channel, as in the bot. It stops before the store closes.
	cctx, stopCourier := context.WithCancel(ctx)
	couriered := make(chan struct{})
	go func() { defer close(couriered); r.engine.Courier.Run(cctx) }()
	defer func() { stopCourier(); <-couriered }()
	in := conversation.NewInbox(r.engine.Dispatcher, conversation.NewBatchKeeper(r.store), dispatchWorkers, r.log)
	defer func() { _ = in.Close(context.WithoutCancel(ctx)) }()
	s := &sender{in: in, out: r.out, store: r.store}
	if _, err := s.dispatchRound(ctx, 20); err != nil { // warm the pools and caches
		return nil, err
	}
	var rows []row
	for _, conversations := range []int{1, 50, 500} {
		rounds := b.n(max(1, (dispatchSamples+conversations-1)/conversations))
		lat, floor, err := s.level(ctx, conversations, rounds)
		if err != nil {
			return nil, err
		}
		b.logf("%d conversations: dispatch p50 %s p99 %s, transaction p50 %s p99 %s", conversations,
			ms(percentile(lat, 50)), ms(percentile(lat, 99)), ms(percentile(floor, 50)), ms(percentile(floor, 99)))
		rows = append(rows, dispatchRow(d.engine, conversations, lat, floor))
	}
	return rows, nil
}

func dispatchRow(engine string, conversations int, lat, floor []time.Duration) row {
	p50, p99 := percentile(lat, 50), percentile(lat, 99)
	f50, f99 := percentile(floor, 50), percentile(floor, 99)
	rw := row{scenario: "dispatch", engine: engine, metric: fmt.Sprintf("p50 / p99, %d conversation%s at once (%d messages)", conversations, plural(conversations), len(lat)),
		figure:  fmt.Sprintf("%s / %s (%s / %s floor)", ms(p50), ms(p99), times(p50, f50), times(p99, f99)),
		floor:   ms(f50) + " / " + ms(f99) + " (one transaction)",
		target:  "-",
		command: reproduce("dispatch", engine)}
	switch conversations {
	case 50:
		rw.target = fmt.Sprintf("p99 < %.0f× floor", dispatchRatio)
		rw.met = check(ratio(p99, f99) < dispatchRatio)
	case 500:
		rw.target = fmt.Sprintf("p50 < %.0f× floor", dispatchRatio)
		rw.met = check(ratio(p50, f50) < dispatchRatio)
	}
	return rw
}

// ratio is figure / floor; a zero floor (nothing measured) gives +Inf, which meets no target.
func ratio(figure, floor time.Duration) float64 {
	if floor <= 0 {
		return math.Inf(1)
	}
	return float64(figure) / float64(floor)
}

// times prints figure / floor as "2.41×".
func times(figure, floor time.Duration) string { return fmt.Sprintf("%.2f×", ratio(figure, floor)) }

// sender sends messages from many conversations at once and times them.
type sender struct {
	in    *conversation.Inbox
	out   *outbox
	store db.Store
	seq   int
}

// level runs rounds of n simultaneous messages and as many simultaneous transactions.
func (s *sender) level(ctx context.Context, n, rounds int) (lat, floor []time.Duration, err error) {
	for range rounds {
		f, err := s.transactionRound(ctx, n)
		if err != nil {
			return nil, nil, err
		}
		l, err := s.dispatchRound(ctx, n)
		if err != nil {
			return nil, nil, err
		}
		floor, lat = append(floor, f...), append(lat, l...)
	}
	return lat, floor, nil
}

// dispatchRound submits one run command from each of n conversations at the same instant and
// returns each one's time to its first reply. It returns once the Inbox is idle, so no late reply
// of this round is taken for the first reply of the next.
func (s *sender) dispatchRound(ctx context.Context, n int) ([]time.Duration, error) {
	s.seq++
	return together(n, func(i int) (time.Duration, error) {
		at := conversation.Address{Platform: benchPlatform, ChannelID: fmt.Sprintf("c%d", i)}
		replied := s.out.expect(at.ChannelID)
		m := conversation.Message{Address: at, UserID: benchPlatform + ":u" + fmt.Sprint(i), Text: "/workflow run bench-hello",
			EventID: fmt.Sprintf("e%d-%d", s.seq, i)}
		start := time.Now()
		if _, err := s.in.Submit(ctx, m); err != nil {
			return 0, err
		}
		select {
		case t := <-replied:
			return t.Sub(start), nil
		case <-time.After(time.Minute):
			return 0, fmt.Errorf("no reply to conversation %s within a minute", at.ChannelID)
		}
	}, func() error { return s.in.Idle(ctx) })
}

// transactionRound runs one MarkInbound from each of n goroutines at the same instant.
func (s *sender) transactionRound(ctx context.Context, n int) ([]time.Duration, error) {
	s.seq++
	return together(n, func(i int) (time.Duration, error) {
		start := time.Now()
		_, err := s.store.MarkInbound(ctx, "floor", fmt.Sprintf("f%d-%d", s.seq, i))
		return time.Since(start), err
	}, func() error { return nil })
}

// together runs f(0..n-1) in n goroutines released at the same instant, then after.
func together(n int, f func(i int) (time.Duration, error), after func() error) ([]time.Duration, error) {
	out := make([]time.Duration, n)
	errs := make([]error, n)
	release := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-release
			out[i], errs[i] = f(i)
		}()
	}
	close(release)
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return nil, err
		}
	}
	return out, after()
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}
