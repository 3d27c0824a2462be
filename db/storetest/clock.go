package storetest

import (
	"sync"
	"time"
)

// Clock is a fake clock for db.Options.Now. Tests move it forward explicitly so lease expiry never
// depends on wall time. It is safe for concurrent use.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock reading start. Engines store microseconds, so start should not carry
// nanoseconds if a test compares times exactly.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// Now returns the current fake time. Pass it as db.Options{Now: c.Now}.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *Clock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
