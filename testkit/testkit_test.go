package testkit

import (
	"sync/atomic"
	"testing"
)

func TestEventuallyReturnsOnceTheConditionHolds(t *testing.T) {
	t.Parallel()
	var n atomic.Int32
	Eventually(t, "the third check", func() bool { return n.Add(1) == 3 })
	if got := n.Load(); got != 3 {
		t.Errorf("condition checked %d times, want 3", got)
	}
}
