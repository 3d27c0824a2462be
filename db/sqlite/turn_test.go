package sqlite

import (
	"context"
	"errors"
	"runtime"
	"testing"
)

// waiters reports how many writers are queued for t.
func (t *turn) waiters() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.urgent) + len(t.normal)
}

// queue starts a writer that takes the turn and reports on got once it has it; it returns after
// the writer is queued, so the order of calls is the order of arrival.
func queue(t *testing.T, tu *turn, urgent bool, name string, got chan<- string) {
	t.Helper()
	before := tu.waiters()
	go func() {
		if err := tu.acquire(context.Background(), urgent); err != nil {
			t.Errorf("%s: %v", name, err)
			return
		}
		got <- name
	}()
	for tu.waiters() == before { // wait until it is queued
		yieldCPU()
	}
}

func TestTurnServesUrgentWritersFirstThenArrivalOrder(t *testing.T) {
	var tu turn
	if err := tu.acquire(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	got := make(chan string, 4)
	queue(t, &tu, false, "normal-1", got)
	queue(t, &tu, false, "normal-2", got)
	queue(t, &tu, true, "urgent-1", got)
	queue(t, &tu, true, "urgent-2", got)
	var order []string
	for range 4 {
		tu.release()
		order = append(order, <-got)
	}
	want := []string{"urgent-1", "urgent-2", "normal-1", "normal-2"}
	for i := range want {
		if order[i] != want[i] {
			t.Fatalf("writers got the turn in order %v, want %v", order, want)
		}
	}
	tu.release()
	if err := tu.acquire(context.Background(), false); err != nil { // free again
		t.Fatal(err)
	}
}

func TestTurnWaiterThatGivesUpLeavesTheQueue(t *testing.T) {
	var tu turn
	if err := tu.acquire(context.Background(), false); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	gaveUp := make(chan error, 1)
	go func() { gaveUp <- tu.acquire(ctx, true) }()
	for tu.waiters() == 0 {
		yieldCPU()
	}
	cancel()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Fatalf("acquire after cancel = %v, want context.Canceled", err)
	}
	if n := tu.waiters(); n != 0 {
		t.Fatalf("%d waiters left after the only one gave up", n)
	}
	tu.release()
	if err := tu.acquire(context.Background(), false); err != nil { // the turn was not leaked
		t.Fatal(err)
	}
}

// yieldCPU lets the goroutine under test run while a test waits for it to queue.
func yieldCPU() { runtime.Gosched() }
