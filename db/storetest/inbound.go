package storetest

import (
	"bytes"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"threadflow/db"
)

// Kept inbound events (issue 27): a request is kept with its message until it is handled, and a
// process that died holding it leaves it to exactly one other.

func keptInboundTests() []test {
	return []test{
		{"KeptInboundIsTakenOverOnceAfterItsClaimLapses", testKeptInboundTakenOver},
		{"KeptInboundRenewedIsNotTakenOver", testKeptInboundRenewed},
		{"KeptInboundHandledIsKeptNoLonger", testKeptInboundHandled},
		{"KeptInboundIsNewOnceAcrossKeepers", testKeptInboundNewOnce},
		{"KeptInboundRefusesWhatItCannotKeep", testKeptInboundRefused},
	}
}

const claimTTL = 10 * time.Second

// kept is an event of platform keeping msg under owner's claim; no msg keeps nothing.
func kept(platform, id, msg string) db.KeptEvent {
	e := db.KeptEvent{InboundEvent: db.InboundEvent{Platform: platform, EventID: id}}
	if msg != "" {
		e.Message, e.Owner, e.TTL = []byte(msg), "owner-a", claimTTL
	}
	return e
}

func (e *env) keep(t *testing.T, events ...db.KeptEvent) {
	t.Helper()
	first, err := e.s.KeepInbound(e.ctx, events)
	if err != nil || slices.Contains(first, false) {
		t.Fatalf("KeepInbound = %v, %v; want every event new", first, err)
	}
}

func (e *env) claimInbound(t *testing.T, platform, owner string) []db.KeptEvent {
	t.Helper()
	got, err := e.s.ClaimInbound(e.ctx, platform, owner, claimTTL, 10)
	if err != nil {
		t.Fatalf("ClaimInbound(%s, %s): %v", platform, owner, err)
	}
	return got
}

func testKeptInboundTakenOver(t *testing.T, e *env) {
	msg := `{"text":"/workflow run deploy \"it's ok\"","user":"slack:U1"}`
	other := kept("discord", "ev-1", `{"text":"d"}`)
	other.Owner = "owner-x"
	e.keep(t, kept("slack", "ev-1", msg), other, kept("slack", "dedup-only", ""))
	if got := e.claimInbound(t, "slack", "owner-b"); len(got) != 0 {
		t.Fatalf("taken over while its claim holds: %+v", got)
	}
	e.clock.Advance(claimTTL + time.Second) // owner-a died: nobody renewed
	got := e.claimInbound(t, "slack", "owner-b")
	if len(got) != 1 || got[0].EventID != "ev-1" || !bytes.Equal(got[0].Message, []byte(msg)) || got[0].Owner != "owner-b" || got[0].Takeovers != 1 {
		t.Fatalf("ClaimInbound after the lapse = %+v; want slack ev-1 with its message, now owner-b's", got)
	}
	if again := e.claimInbound(t, "slack", "owner-c"); len(again) != 0 {
		t.Fatalf("a second claimant took it too: %+v", again)
	}
	if n, err := e.s.RenewInbound(e.ctx, "owner-a", claimTTL); err != nil || n != 0 {
		t.Fatalf("the dead owner renewed %d events (%v); want none: they are owner-b's", n, err)
	}
	e.clock.Advance(claimTTL + time.Second) // owner-b died too
	if got := e.claimInbound(t, "slack", "owner-c"); len(got) != 1 || got[0].EventID != "ev-1" || got[0].Takeovers != 2 {
		t.Fatalf("after owner-b's lapse = %+v; want ev-1 again, taken over twice", got)
	}
	if got := e.claimInbound(t, "discord", "owner-d"); len(got) != 1 || got[0].Platform != "discord" {
		t.Fatalf("discord's claim = %+v; want its one event", got)
	}
}

func testKeptInboundRenewed(t *testing.T, e *env) {
	e.keep(t, kept("slack", "ev-1", "m1"), kept("slack", "ev-2", "m2"))
	for range 3 {
		e.clock.Advance(claimTTL / 2)
		if n, err := e.s.RenewInbound(e.ctx, "owner-a", claimTTL); err != nil || n != 2 {
			t.Fatalf("RenewInbound = %d, %v; want both events", n, err)
		}
		if got := e.claimInbound(t, "slack", "owner-b"); len(got) != 0 {
			t.Fatalf("taken over although renewed: %+v", got)
		}
	}
}

func testKeptInboundHandled(t *testing.T, e *env) {
	e.keep(t, kept("slack", "ev-1", "m1"), kept("slack", "ev-2", "m2"))
	if err := e.s.HandledInbound(e.ctx, []db.InboundEvent{{Platform: "slack", EventID: "ev-1"}}); err != nil {
		t.Fatal(err)
	}
	if n, err := e.s.RenewInbound(e.ctx, "owner-a", claimTTL); err != nil || n != 1 {
		t.Fatalf("RenewInbound = %d, %v; want only the unhandled event", n, err)
	}
	e.clock.Advance(2 * claimTTL)
	got := e.claimInbound(t, "slack", "owner-b")
	if len(got) != 1 || got[0].EventID != "ev-2" {
		t.Fatalf("ClaimInbound = %+v; want ev-2 only: ev-1 was handled", got)
	}
	if first, err := e.s.KeepInbound(e.ctx, []db.KeptEvent{kept("slack", "ev-1", "m1")}); err != nil || first[0] {
		t.Fatalf("a redelivery of the handled event is new = %v, %v", first, err)
	}
	if err := e.s.HandledInbound(e.ctx, []db.InboundEvent{{Platform: "slack", EventID: "ev-1"}, {Platform: "slack", EventID: "ev-2"}}); err != nil {
		t.Fatalf("HandledInbound again: %v; handling is idempotent", err)
	}
	e.clock.Advance(2 * claimTTL)
	if got := e.claimInbound(t, "slack", "owner-c"); len(got) != 0 {
		t.Fatalf("handled events taken over: %+v", got)
	}
}

// testKeptInboundNewOnce: every replica receives a Discord event and keeps it at once; one keeps it.
func testKeptInboundNewOnce(t *testing.T, e *env) {
	var news atomic.Int32
	errs := race(func(i int) error {
		ev := kept("discord", "interaction-1", "m")
		ev.Owner = "replica-" + string(rune('a'+i))
		first, err := e.s.KeepInbound(e.ctx, []db.KeptEvent{ev})
		if err == nil && first[0] {
			news.Add(1)
		}
		return err
	})
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := news.Load(); n != 1 {
		t.Fatalf("%d keepers found the event new, want 1", n)
	}
}

func testKeptInboundRefused(t *testing.T, e *env) {
	big := kept("slack", "big", strings.Repeat("x", db.MaxKeptMessage+1))
	unowned := kept("slack", "unowned", "m")
	unowned.Owner = ""
	for _, ev := range []db.KeptEvent{big, unowned, kept("", "no-platform", "")} {
		if _, err := e.s.KeepInbound(e.ctx, []db.KeptEvent{kept("slack", "fine", "m"), ev}); err == nil {
			t.Errorf("KeepInbound of %s kept it", ev.EventID)
		}
	}
	if first, err := e.s.KeepInbound(e.ctx, []db.KeptEvent{kept("slack", "fine", "m")}); err != nil || !first[0] {
		t.Fatalf("a refused batch recorded its other event: %v, %v", first, err)
	}
	atLimit := kept("slack", "at-limit", strings.Repeat("é", db.MaxKeptMessage/2))
	e.keep(t, atLimit)
}
