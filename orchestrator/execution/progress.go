package execution

import (
	"context"
	"time"
)

// progressEvery is the least time between two progress notices of one execution. A notice carries
// every node's state, built in O(nodes); sent after each completion, a chain of fast nodes built it
// O(nodes²) times in all, a quarter of a 5,000-node chain's time (BENCHMARKS.md, issue 18). The
// Reporter shows progress at most once per Debounce (a second by default), so nobody sees less.
const progressEvery = 100 * time.Millisecond

// progressPacer holds back a progress notice that comes sooner than progressEvery after the last
// one and sends the state of that moment once the time has passed, so the last change before a long
// node is always shown. Only the scheduling goroutine touches it.
type progressPacer struct {
	sent time.Time
	held *time.Timer // armed while a change waits to be sent
}

// showProgress says that the nodes' states changed: the notice goes now, or when progressEvery has
// passed since the last one.
func (e *execution) showProgress(ctx context.Context) {
	p := &e.pace
	if p.held != nil {
		return // the notice held back will show this change too
	}
	if wait := progressEvery - time.Since(p.sent); wait > 0 {
		p.held = time.NewTimer(wait)
		return
	}
	e.sendProgress(ctx)
}

// due fires when a held-back notice is to be sent; it never fires when none is held back.
func (p *progressPacer) due() <-chan time.Time {
	if p.held == nil {
		return nil
	}
	return p.held.C
}

// sendProgress tells the notifier every node's state now.
func (e *execution) sendProgress(ctx context.Context) {
	if e.pace.held != nil {
		e.pace.held.Stop()
		e.pace.held = nil
	}
	e.pace.sent = time.Now()
	e.x.Notify.Notify(ctx, Notice{Kind: NoticeProgress, Run: e.run, Nodes: e.nodeStatuses()})
}

// flushProgress sends a held-back notice at once: scheduling ended, and the run's final notice
// must come after it.
func (e *execution) flushProgress(ctx context.Context) {
	if e.pace.held != nil {
		e.sendProgress(ctx)
	}
}

// next waits for what the scheduler decides on next, sending a held-back progress notice when it
// is due: a node's result, or the commit of the oldest completion (c, with the commit's error).
func (e *execution) next(ctx context.Context, s *scheduler) (r nodeResult, c *completion, err error) {
	for {
		var committed <-chan error
		if len(s.committing) > 0 {
			committed = s.committing[0].recorded
		}
		select {
		case r := <-s.results:
			return r, nil, nil
		case err := <-committed:
			c := s.committing[0]
			s.committing = s.committing[1:]
			return nodeResult{}, &c, err
		case <-e.pace.due():
			e.sendProgress(ctx)
		}
	}
}
