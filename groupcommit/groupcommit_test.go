package groupcommit

import (
	"runtime"
	"slices"
	"sync"
	"testing"
)

// A lone request is written at once, alone; requests arriving while a write is in flight go into
// the next writes together, at most Max at a time, each getting its own result.
func TestBatcherGroupsWhatArrivesDuringAWrite(t *testing.T) {
	t.Parallel()
	entered, release := make(chan struct{}), make(chan struct{})
	var (
		mu      sync.Mutex
		batches [][]int
	)
	b := &Batcher[int, int]{Max: 4, Write: func(batch []int) []int {
		mu.Lock()
		batches = append(batches, slices.Clone(batch))
		first := len(batches) == 1
		mu.Unlock()
		if first {
			close(entered)
			<-release
		}
		out := make([]int, len(batch))
		for i, v := range batch {
			out[i] = v * 10
		}
		return out
	}}
	lone := make(chan int)
	go func() { lone <- b.Do(0) }()
	<-entered
	const burst = 10
	results := make([]int, burst)
	var wg sync.WaitGroup
	for i := range burst {
		wg.Go(func() { results[i] = b.Do(i + 1) })
	}
	for b.Pending() < burst {
		runtime.Gosched()
	}
	close(release)
	wg.Wait()
	if got := <-lone; got != 0 {
		t.Errorf("lone request got %d, want 0", got)
	}
	for i, got := range results {
		if got != (i+1)*10 {
			t.Errorf("request %d got %d, want %d (its own result)", i+1, got, (i+1)*10)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(batches[0]) != 1 {
		t.Errorf("first write held %v; want the lone request only", batches[0])
	}
	sizes := []int{}
	for _, batch := range batches[1:] {
		sizes = append(sizes, len(batch))
	}
	if !slices.Equal(sizes, []int{4, 4, 2}) {
		t.Errorf("the burst was written in batches of %v; want [4 4 2] (Max 4)", sizes)
	}
}
