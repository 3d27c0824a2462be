package storetest

import (
	"errors"
	"testing"
	"time"

	"threadflow/db"
)

func reachTests() []test {
	return []test{
		{"TerminalRunsGoToTheirTerminalWhileAttached", testTerminalKeepsItsRuns},
		{"UnattendedTerminalRunsGoToAServer", testUnattendedRunsGoToAServer},
		{"GateTimersFollowTheSameReach", testTimersFollowReach},
	}
}

// Reaches of the two kinds of process (maintenance.Presence): a server connected to Slack that
// takes unattended terminal runs, and terminals attached to one conversation each.
var (
	server   = db.Reach{Platforms: []string{"slack"}, Unattended: []string{"console"}}
	terminal = db.Reach{Conversations: []string{"console:local"}}
	other    = db.Reach{Conversations: []string{"console:other"}}
)

// consoleRun creates a queued run started from the terminal conversation console:local.
func (e *env) consoleRun(t *testing.T) db.Run {
	t.Helper()
	if _, err := e.s.EnsureConversation(e.ctx, db.Conversation{Platform: "console", ChannelID: "local"}); err != nil {
		t.Fatal(err)
	}
	return e.create(t, func(n *db.NewRun) { n.ConversationID, n.ParentConversationID = "console:local", "console:local" })
}

func wantNoClaim(t *testing.T, e *env, r db.Reach, why string) {
	t.Helper()
	if got, err := e.s.ClaimRun(e.ctx, worker, leaseTTL, r); !errors.Is(err, db.ErrNoQueuedRun) {
		t.Fatalf("ClaimRun(%+v) = %s, %v; want ErrNoQueuedRun: %s", r, got.ID, err, why)
	}
}

func wantClaim(t *testing.T, e *env, r db.Reach, id, why string) db.Run {
	t.Helper()
	got, err := e.s.ClaimRun(e.ctx, worker, leaseTTL, r)
	if err != nil || got.ID != id {
		t.Fatalf("ClaimRun(%+v) = %s, %v; want %s: %s", r, got.ID, err, id, why)
	}
	return got
}

// A run of an attached terminal's conversation is that terminal's: a server and another terminal
// leave it alone.
func testTerminalKeepsItsRuns(t *testing.T, e *env) {
	run := e.consoleRun(t)
	if err := e.s.AttachTerminal(e.ctx, "console:local", "term-1", leaseTTL); err != nil {
		t.Fatal(err)
	}
	wantNoClaim(t, e, server, "its terminal is attached")
	wantNoClaim(t, e, other, "it belongs to another terminal's conversation")
	e.clock.Advance(leaseTTL / 2)
	if err := e.s.AttachTerminal(e.ctx, "console:local", "term-1", leaseTTL); err != nil { // renewal
		t.Fatal(err)
	}
	e.clock.Advance(leaseTTL * 3 / 4) // past the first expiry, within the renewed one
	wantNoClaim(t, e, server, "the renewed attachment still holds")
	wantClaim(t, e, terminal, run.ID, "the attached terminal takes its own run")
}

// Once no terminal is attached (it detached, or its attachment expired), a server takes the run;
// a server never takes a terminal run without Unattended, nor a run of another platform.
func testUnattendedRunsGoToAServer(t *testing.T, e *env) {
	first := e.consoleRun(t)
	if err := e.s.AttachTerminal(e.ctx, "console:local", "term-1", leaseTTL); err != nil {
		t.Fatal(err)
	}
	if err := e.s.DetachTerminal(e.ctx, "term-1"); err != nil {
		t.Fatal(err)
	}
	wantNoClaim(t, e, db.Reach{Platforms: []string{"slack", "discord"}}, "a server without Unattended leaves terminal runs alone")
	wantClaim(t, e, server, first.ID, "its terminal detached")

	second := e.consoleRun(t)
	if err := e.s.AttachTerminal(e.ctx, "console:local", "term-2", leaseTTL); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(leaseTTL + time.Second) // term-2 was killed: nobody renewed it
	wantClaim(t, e, server, second.ID, "its terminal's attachment expired")
	wantNoClaim(t, e, db.Reach{Unattended: []string{"discord"}}, "Unattended names platforms")
}

// Gate timers of a terminal run fire in its attached terminal, or in a server once it is gone.
func testTimersFollowReach(t *testing.T, e *env) {
	run := e.consoleRun(t)
	run = wantClaim(t, e, db.Reach{}, run.ID, "setup")
	p := gatePause(db.PauseApproval)
	p.Since, p.DueAt, p.OnTimeout = e.clock.Now(), e.clock.Now().Add(time.Hour), db.TimeoutReject
	run = must(t)(e.s.PauseRun(e.ctx, run.Lease(), p))
	if err := e.s.AttachTerminal(e.ctx, "console:local", "term-1", 3*time.Hour); err != nil {
		t.Fatal(err)
	}
	e.clock.Advance(2 * time.Hour)
	if _, ok, err := e.s.NextGateTimer(e.ctx, server); err != nil || ok {
		t.Fatalf("a server sees the timer of an attached terminal's run (or fails: %v)", err)
	}
	if got, err := e.s.FireGateTimers(e.ctx, server, nil); err != nil || len(got) != 0 {
		t.Fatalf("a server fired %+v, %v; the terminal is attached", got, err)
	}
	if err := e.s.DetachTerminal(e.ctx, "term-1"); err != nil {
		t.Fatal(err)
	}
	if got, err := e.s.FireGateTimers(e.ctx, server, nil); err != nil || len(got) != 1 || got[0].Run.ID != run.ID {
		t.Fatalf("after the terminal detached a server fired %+v, %v; want the run's timeout", got, err)
	}
}
