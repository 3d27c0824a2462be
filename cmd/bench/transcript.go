package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"go.uber.org/zap"

	"threadflow/conversation"
)

// The transcript scenario's size and target: recording a post must not slow a run noticeably
// (a run posts a few messages and edits its status once per node).
const (
	transcriptThreads  = 20
	transcriptMessages = 100 // per thread: posts, each edited once
	transcriptTarget   = 10 * time.Millisecond
)

// transcript times posts and edits through the recording outbox (conversation.Recorded) on the
// engine, against the same outbox without recording, and reports the p50 and p99 latency each
// write added. Threads post one after another, as one run's reporter does.
func (b *bench) transcript(ctx context.Context, d *database) ([]row, error) {
	st, err := d.open(ctx, zap.NewNop())
	if err != nil {
		return nil, err
	}
	defer st.Close()
	failed := 0
	bare := newOutbox()
	rec := conversation.Recorded(bare, st, func(string, error) { failed++ })
	var added, floor []time.Duration
	reply := conversation.Reply{Text: conversation.T(conversation.P("Status of run "), conversation.C("0123456789"), conversation.P(": running"))}
	for th := range b.n(transcriptThreads) {
		at := conversation.Address{Platform: benchPlatform, ChannelID: "C1", ThreadID: fmt.Sprintf("t%d", th)}
		for range b.n(transcriptMessages) {
			start := time.Now()
			if _, err := bare.Post(ctx, at, reply); err != nil {
				return nil, err
			}
			base := time.Since(start)
			start = time.Now()
			ref, err := rec.Post(ctx, at, reply)
			if err != nil {
				return nil, err
			}
			posted := time.Since(start)
			start = time.Now()
			if err := rec.Edit(ctx, ref, reply); err != nil {
				return nil, err
			}
			edited := time.Since(start)
			added = append(added, posted-base, edited-base)
			floor = append(floor, base)
		}
	}
	if failed > 0 {
		return nil, fmt.Errorf("%d transcript writes failed", failed)
	}
	slices.Sort(added)
	slices.Sort(floor)
	p50, p99 := added[len(added)/2], added[len(added)*99/100]
	b.logf("%d writes: p50 %s, p99 %s added", len(added), ms(p50), ms(p99))
	return []row{{scenario: "transcript", engine: d.engine,
		metric: fmt.Sprintf("latency a transcript write adds to a post or an edit (%d of each), p50 / p99", len(added)/2),
		figure: ms(p50) + " / " + ms(p99), floor: ms(floor[len(floor)/2]) + " (the post without recording)",
		target: "p99 < " + ms(transcriptTarget), met: check(p99 < transcriptTarget), command: reproduce("transcript", d.engine)}}, nil
}
