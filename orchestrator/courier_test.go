package orchestrator_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"threadflow/conversation"
	"threadflow/db"
	"threadflow/db/storetest"
	"threadflow/orchestrator/execution"
	"threadflow/orchestrator/maintenance"
	"threadflow/orchestrator/reporting"
	"threadflow/orchestratortest"
)

// failures counts what the courier gave up on, as the Prometheus counter does.
type failures struct {
	execution.Observer
	n atomic.Int32
}

func (f *failures) OutboxFailed(string) { f.n.Add(1) }
func (f *failures) SendFailed(string)   {}

// A platform error is retried with backoff and a bound; a refusal fails at once with the
// platform's words; either way the run's messages after it are not held back for good.
func TestCourierRetriesThenFailsWithThePlatformsWords(t *testing.T) {
	t.Parallel()
	engines(t, func(t *testing.T, open opener) {
		ctx := context.Background()
		clock := storetest.NewClock(time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC))
		st := open(t, db.Options{Now: clock.Now})
		out := &orchestratortest.Outbox{Err: errors.New("503 service unavailable")}
		obs := &failures{Observer: nil}
		c := &maintenance.Courier{Store: st, Outboxes: map[string]conversation.Outbox{"console": out}, Log: zaptest.NewLogger(t),
			Observe: obs, Owner: "replica-a", Now: clock.Now}
		rep := &reporting.Reporter{Store: st, Outboxes: c.Outboxes, Log: zaptest.NewLogger(t)}
		run, err := st.CreateRun(ctx, db.NewRun{ID: "abcdefgh12", Workflow: "w", ConversationID: "console:chan", ParentConversationID: "console:chan",
			UserID: "console:ann", WorkingPath: t.TempDir(),
			Parents: []db.Conversation{{ID: "console:chan", Platform: "console", ChannelID: "chan"}},
			Owe:     rep.Announce(db.Run{ID: "abcdefgh12", Workflow: "w"}, conversation.Person{ID: "console:ann"})})
		if err != nil {
			t.Fatal(err)
		}
		for attempt := 1; attempt <= 3; attempt++ {
			if n := c.Once(ctx); n != 0 {
				t.Fatalf("attempt %d delivered %d messages to a platform that is down", attempt, n)
			}
			u, _ := st.Undelivered(ctx, run.ID)
			if len(u) != 2 || u[0].Kind != "announce" || u[0].State != db.OutboxOwed || u[0].Attempts != attempt || !strings.Contains(u[0].LastError, "503") {
				t.Fatalf("after attempt %d: %+v", attempt, u)
			}
			if want := clock.Now().Add(maintenance.RetryWait(attempt)); !u[0].NextAttemptAt.Equal(want) {
				t.Fatalf("attempt %d retries at %v, want %v", attempt, u[0].NextAttemptAt, want)
			}
			if n := c.Once(ctx); n != 0 { // not due yet
				t.Fatalf("a message was tried again before its backoff")
			}
			clock.Advance(maintenance.RetryWait(attempt))
		}
		out.Err = fmt.Errorf("%w: channel_not_found", conversation.ErrRefused)
		c.Once(ctx) // the announcement fails, and the status message behind it is tried, and fails
		u, _ := st.Undelivered(ctx, run.ID)
		if len(u) != 2 || obs.n.Load() != 2 {
			t.Fatalf("after a refusal: %d undelivered, %d counted failed; want both failed", len(u), obs.n.Load())
		}
		for _, x := range u {
			if x.State != db.OutboxFailed || !strings.Contains(x.LastError, "channel_not_found") {
				t.Fatalf("%s is %s (%q), want failed with the platform's words", x.Kind, x.State, x.LastError)
			}
		}
		if out.Count() != 0 {
			t.Fatalf("posted: %s", out.Dump())
		}
	})
}

// Delivery is at least once and idempotent in effect: a courier that died after posting (its claim
// ran out, the post not recorded) leaves the message in doubt, and the next courier does not post
// it again.
func TestCourierDoesNotRepostWhatADeadCourierPosted(t *testing.T) {
	t.Parallel()
	engines(t, func(t *testing.T, open opener) {
		ctx := context.Background()
		clock := storetest.NewClock(time.Date(2026, 11, 26, 9, 0, 0, 0, time.UTC))
		st := open(t, db.Options{Now: clock.Now})
		out := &orchestratortest.Outbox{}
		outboxes := map[string]conversation.Outbox{"console": out}
		rep := &reporting.Reporter{Store: st, Outboxes: outboxes, Log: zaptest.NewLogger(t)}
		owe := rep.Announce(db.Run{ID: "abcdefgh12", Workflow: "w"}, conversation.Person{ID: "console:ann"})
		if _, err := st.CreateRun(ctx, db.NewRun{ID: "abcdefgh12", Workflow: "w", ConversationID: "console:chan", ParentConversationID: "console:chan",
			UserID: "console:ann", WorkingPath: t.TempDir(), Parents: []db.Conversation{{ID: "console:chan", Platform: "console", ChannelID: "chan"}},
			Owe: owe}); err != nil {
			t.Fatal(err)
		}
		// The dead courier: it claimed the announcement and posted it, and died before recording it.
		claimed, err := st.ClaimOwed(ctx, "dead", time.Minute, db.Reach{}, 1)
		if err != nil || len(claimed) != 1 {
			t.Fatalf("ClaimOwed = %v, %v", claimed, err)
		}
		var r conversation.Reply
		r.Key = claimed[0].Key
		r.Text = conversation.T(conversation.P("▶ w - run abcdefgh12 by console:ann"))
		if _, _, err := out.StartThread(ctx, conversation.Address{Platform: "console", ChannelID: "chan"}, r); err != nil {
			t.Fatal(err)
		}
		clock.Advance(time.Minute + time.Second)
		c := &maintenance.Courier{Store: st, Outboxes: outboxes, Log: zaptest.NewLogger(t), Owner: "next", Now: clock.Now}
		if n := c.Once(ctx); n != 2 {
			t.Fatalf("delivered %d, want the announcement and the status", n)
		}
		if got := len(out.Find("▶ w - run abcdefgh12")); got != 1 {
			t.Fatalf("the announcement is posted %d times:\n%s", got, out.Dump())
		}
		if got := len(out.Find("Status of run abcdefgh12")); got != 1 {
			t.Fatalf("the status message is posted %d times:\n%s", got, out.Dump())
		}
		run, _ := st.GetRun(ctx, "abcdefgh12")
		if run.ConversationID != "console:chan:m1" {
			t.Fatalf("the run is in %s, want the announcement's thread", run.ConversationID)
		}
	})
}
