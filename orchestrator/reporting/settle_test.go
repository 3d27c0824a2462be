package reporting

import (
	"testing"
	"time"

	"go.uber.org/zap"

	"threadflow/db"
	"threadflow/orchestrator/execution"
)

// SettleAll, called as the engine stops, leaves no debounce timer armed: none can owe progress
// after the process closed its store (the owe would fail, and its warning reach the terminal of a
// `bot chat` that is exiting).
func TestSettleAllDisarmsEveryProgressTimer(t *testing.T) {
	r := &Reporter{Log: zap.NewNop(), Debounce: time.Hour}
	for _, id := range []string{"run0000001", "run0000002"} {
		r.Notify(t.Context(), execution.Notice{Kind: execution.NoticeProgress, Run: db.Run{ID: id}})
	}
	r.mu.Lock()
	var timers []*time.Timer
	for _, p := range r.progress {
		timers = append(timers, p.timer)
	}
	r.mu.Unlock()
	if len(timers) != 2 {
		t.Fatalf("%d progress timers armed, want 2", len(timers))
	}
	r.SettleAll()
	if n := len(r.progress); n != 0 {
		t.Errorf("%d runs still have progress pending after SettleAll", n)
	}
	for _, tm := range timers {
		if tm.Stop() {
			t.Errorf("a progress timer was still armed after SettleAll")
		}
	}
}
