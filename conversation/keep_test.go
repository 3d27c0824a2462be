package conversation

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"threadflow/db"
	"threadflow/db/dbtest"
	"threadflow/db/storetest"
	"threadflow/testkit"
)

// counting is a Handler that records every message it is handed, with whether it was recovered.
type counting struct {
	mu   sync.Mutex
	seen []Message
}

func (c *counting) Handle(_ context.Context, m Message) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seen = append(c.seen, m)
}

func (c *counting) handled() []Message {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]Message(nil), c.seen...)
}

// Issue 27: a process that kept a request and died before handling it leaves it to exactly one of
// the processes alive, which handles it as a recovered message, once, on both engines.
func TestAnEventWhoseProcessDiedIsTakenOverOnce(t *testing.T) {
	t.Parallel()
	dbtest.ForEachEngine(t, func(t *testing.T, open func(testing.TB, db.Options) db.Store) {
		clock := storetest.NewClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
		st := open(t, db.Options{Now: clock.Now})

		// The dying process: its handler never returns, and nothing renews its claim.
		stuck := newRecorder()
		never := stuck.hold("/workflow run deploy now")
		dead := newTestInbox(t, stuck, NewBatchKeeper(st), 1)
		t.Cleanup(func() { close(never) }) // before the Inbox's Close, which waits for it
		m := Message{Address: Address{Platform: "slack", ChannelID: "C1", ThreadID: "1.5"}, UserID: "slack:U1", UserName: "Ann",
			Text: "/workflow run deploy now", EventID: "command:env-7", Mentioned: true, Action: &Action{Ref: Ref{MessageID: "9.9"}}}
		submit(t, dead, m)
		stuck.waitFor(t, "the dying process to take the message", func() bool { return stuck.running == 1 })

		// The living: three processes keeping slack events, a discord one, and a redelivery.
		var alive []*counting
		var inboxes []*Inbox
		ctx, cancel := context.WithCancel(t.Context())
		var wg sync.WaitGroup
		t.Cleanup(func() { cancel(); wg.Wait() })
		start := func(platform string) {
			for range 3 {
				c := &counting{}
				alive = append(alive, c)
				in := newTestInbox(t, c, NewBatchKeeper(st), 2)
				inboxes = append(inboxes, in)
				wg.Go(func() { in.Keep(ctx, platform) })
			}
		}
		if ok, err := newTestInbox(t, &counting{}, st, 1).Submit(t.Context(), m); err != nil || ok {
			t.Fatalf("a redelivery while the claim holds = %v, %v; want a duplicate", ok, err)
		}
		clock.Advance(defaultClaim + time.Second) // the claim lapses: nobody renewed it
		start("discord")
		start("slack")
		var got []Message
		testkit.Eventually(t, "one process to handle the request", func() bool {
			got = nil
			for _, c := range alive {
				got = append(got, c.handled()...)
			}
			return len(got) > 0
		})
		for _, in := range inboxes { // the handler has returned; its handled mark is written next
			waitIdle(t, in)
		}
		clock.Advance(3 * defaultClaim) // were it still kept, it would be taken again now
		cancel()
		wg.Wait()
		got = nil
		for _, c := range alive {
			got = append(got, c.handled()...)
		}
		if len(got) != 1 {
			t.Fatalf("handled %d times, want once: %+v", len(got), got)
		}
		h := got[0]
		if !h.Recovered || h.Text != m.Text || h.EventID != m.EventID || h.Address != m.Address || h.UserName != "Ann" ||
			h.Action == nil || h.Action.Ref.MessageID != "9.9" {
			t.Fatalf("taken over as %+v; want the message as it came, recovered", h)
		}
		after, err := st.ClaimInbound(t.Context(), "slack", "later", time.Minute, 10)
		if err != nil || len(after) != 0 {
			t.Fatalf("after it was handled the event is still kept: %+v, %v", after, err)
		}
	})
}

// A request whose handling killed every process that took it over is given up after MaxTakeovers,
// not passed on forever.
func TestARequestTakenOverTooOftenIsGivenUp(t *testing.T) {
	t.Parallel()
	clock := storetest.NewClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	st := dbtest.SQLite(t, db.Options{Now: clock.Now})
	ev := db.KeptEvent{InboundEvent: db.InboundEvent{Platform: "slack", EventID: "command:poison"},
		Message: []byte(`{"Platform":"slack","ChannelID":"C1","Text":"/workflow run crash"}`), Owner: "first", TTL: time.Minute}
	if _, err := st.KeepInbound(t.Context(), []db.KeptEvent{ev}); err != nil {
		t.Fatal(err)
	}
	for i := range MaxTakeovers { // each taker dies handling it
		clock.Advance(2 * time.Minute)
		if got, err := st.ClaimInbound(t.Context(), "slack", fmt.Sprintf("taker-%d", i), time.Minute, 10); err != nil || len(got) != 1 {
			t.Fatalf("takeover %d = %+v, %v", i+1, got, err)
		}
	}
	clock.Advance(2 * time.Minute)
	c := &counting{}
	in := newTestInbox(t, c, st, 1)
	in.takeOver(t.Context(), "slack")
	waitIdle(t, in)
	if got := c.handled(); len(got) != 0 {
		t.Fatalf("handled %+v after %d takeovers; want it given up", got, MaxTakeovers)
	}
	clock.Advance(2 * time.Minute)
	if got, err := st.ClaimInbound(t.Context(), "slack", "later", time.Minute, 10); err != nil || len(got) != 0 {
		t.Fatalf("the given-up request is still kept: %+v, %v", got, err)
	}
}
