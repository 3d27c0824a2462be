package orchestrator_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"threadflow/conversation"
	"threadflow/db"
	"threadflow/orchestratortest"
)

// slowFinish is a platform that takes holdFor to accept a run's completion message, as Slack does
// when its edits are rate limited. It records whether the bot gave up on the message meanwhile.
type slowFinish struct {
	*orchestratortest.Outbox
	holdFor   time.Duration
	cancelled atomic.Bool
}

func (o *slowFinish) Post(ctx context.Context, to conversation.Address, r conversation.Reply) (conversation.Ref, error) {
	if strings.Contains(r.Text.String(), "completed.") {
		select {
		case <-time.After(o.holdFor): // the platform's own slowness, not a wait for a condition
		case <-ctx.Done():
			o.cancelled.Store(true)
			return conversation.Ref{}, ctx.Err()
		}
	}
	return o.Outbox.Post(ctx, to, r)
}

// TestCompletionIsToldAfterTheLeaseEnds: completing a run ends its lease, so the worker's next
// renewal finds the lease gone. A completion message still being posted then must not be cancelled:
// the user would never hear that the run completed.
func TestCompletionIsToldAfterTheLeaseEnds(t *testing.T) {
	eachEngineSerial(t, func(t *testing.T, h *harness) {
		out := &slowFinish{Outbox: h.out, holdFor: time.Second}
		h.cfg.LeaseTTL = 300 * time.Millisecond // renewals every 100 ms: several while the post is held
		h.cfg.Outboxes = map[string]conversation.Outbox{"console": out}
		h.restart()
		h.writeWorkflow("one", "name: one\nnodes:\n  - id: a\n    bash: \"true\"\n")
		h.say(admin, "", "/workflow run one")
		h.waitFor("the completion message", func() bool { return len(h.out.Find("completed.")) > 0 })
		if out.cancelled.Load() {
			t.Error("the completion message was cancelled while the platform took it")
		}
		if runs := h.runs("one"); len(runs) != 1 || runs[0].Status != db.StatusCompleted {
			t.Errorf("runs of one: %+v", runs)
		}
	})
}
