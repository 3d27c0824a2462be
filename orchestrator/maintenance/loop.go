package maintenance

import (
	"context"
	"time"
)

// loop is the shape of every background service here (Rescuer, GateTimers, Courier): one pass,
// then a wait for whichever comes first of the time sleep asks for (asked after each pass, so it
// can follow what the pass left due), a wake-up, or the end of ctx. A nil wake is a service that
// nobody wakes.
func loop(ctx context.Context, wake <-chan struct{}, once func(context.Context), sleep func(context.Context) time.Duration) {
	for {
		once(ctx)
		t := time.NewTimer(sleep(ctx))
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-wake:
		case <-t.C:
		}
		t.Stop()
	}
}
