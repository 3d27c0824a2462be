package web

import (
	"context"
	"sync"
	"time"

	"go.uber.org/zap"
)

// fingerprintFunc summarises what a live view shows (a run's status and event count, the runs
// list's ids and states), so the poller can tell whether it changed without rendering it.
type fingerprintFunc func(ctx context.Context, key string) (string, error)

// watcher is the shared poller behind every live view. One goroutine polls the store once per key
// per interval, however many browsers show that key, and signals the subscribers whose view
// changed. The goroutine exists only while someone subscribes: the last unsubscribe stops it, so a
// disconnected browser leaves nothing running.
type watcher struct {
	every time.Duration
	print fingerprintFunc
	log   *zap.Logger

	mu      sync.Mutex
	subs    map[*subscription]struct{}
	running bool
	kicks   chan struct{} // buffered 1: "poll now", from the Outbox
}

// subscription is one live view waiting for changes of key.
type subscription struct {
	key     string
	changed chan struct{} // buffered 1: a pending change is never lost, never queued twice
	last    string        // the fingerprint the subscriber was last told about; poller-owned
}

func newWatcher(every time.Duration, print fingerprintFunc, log *zap.Logger) *watcher {
	return &watcher{every: every, print: print, log: log, subs: map[*subscription]struct{}{}, kicks: make(chan struct{}, 1)}
}

// subscribe registers a view of key. Its first poll always signals, so a change between rendering
// the page and subscribing is not missed.
func (w *watcher) subscribe(key string) *subscription {
	s := &subscription{key: key, changed: make(chan struct{}, 1)}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.subs[s] = struct{}{}
	if !w.running {
		w.running = true
		go w.loop()
	}
	return s
}

// unsubscribe removes a view; the poller stops at its next turn when none is left.
func (w *watcher) unsubscribe(s *subscription) {
	w.mu.Lock()
	defer w.mu.Unlock()
	delete(w.subs, s)
	w.kickLocked()
}

// kick asks for a poll now.
func (w *watcher) kick() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.kickLocked()
}

func (w *watcher) kickLocked() {
	select {
	case w.kicks <- struct{}{}:
	default: // a poll is already pending
	}
}

// active reports whether the polling goroutine runs and how many views are subscribed.
func (w *watcher) active() (running bool, subs int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.running, len(w.subs)
}

func (w *watcher) loop() {
	t := time.NewTicker(w.every)
	defer t.Stop()
	for {
		subs := w.snapshot()
		if subs == nil {
			return
		}
		w.poll(subs)
		select {
		case <-t.C:
		case <-w.kicks:
		}
	}
}

// snapshot copies the subscriptions, or marks the poller stopped and returns nil when none is left.
func (w *watcher) snapshot() []*subscription {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.subs) == 0 {
		w.running = false
		return nil
	}
	subs := make([]*subscription, 0, len(w.subs))
	for s := range w.subs {
		subs = append(subs, s)
	}
	return subs
}

// poll fingerprints each distinct key once and signals the subscribers whose view changed.
func (w *watcher) poll(subs []*subscription) {
	ctx, cancel := context.WithTimeout(context.Background(), max(w.every, time.Second))
	defer cancel()
	prints := map[string]string{}
	failed := map[string]bool{}
	for _, s := range subs {
		if failed[s.key] {
			continue
		}
		fp, ok := prints[s.key]
		if !ok {
			var err error
			if fp, err = w.print(ctx, s.key); err != nil {
				w.log.Warn("web.poll_failed", zap.String("view", s.key), zap.Error(err))
				failed[s.key] = true // keep showing the last state; the next poll tries again
				continue
			}
			prints[s.key] = fp
		}
		if fp != s.last {
			s.last = fp
			select {
			case s.changed <- struct{}{}:
			default:
			}
		}
	}
}
