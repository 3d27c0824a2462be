package drivertest

import (
	"errors"
	"strings"
	"testing"
	"time"

	"threadflow/db"
)

// testCoreShapes runs the core's operations, as the bot makes them, on a db.Machine whose driver
// is the engine's behind a recorder: every compare-and-set they hand the engine is checked against
// the model, and every guard and SET field must have been used by one of them.
func testCoreShapes(t *testing.T, e *env) {
	rec := newRecorder(t, e.d)
	sh := &shapes{env: e, m: &db.Machine{Driver: rec, Now: e.clock.Now}}
	for _, op := range coreOps {
		t.Run(op.name, func(t *testing.T) {
			rec.t = t
			before := rec.checked
			op.do(t, sh)
			if rec.checked == before {
				t.Errorf("%s handed the driver no compare-and-set", op.name)
			}
		})
	}
	rec.t = t
	if unused := rec.unused(); len(unused) > 0 {
		t.Errorf("no operation of coreOps hands the driver %s: add the core operation that does", strings.Join(unused, ", "))
	}
	if rec.missed == 0 {
		t.Error("no compare-and-set of coreOps missed its guard: the refusals did not run")
	}
}

// shapes is the state coreOps share: the machine and the runs they move. a goes through every
// transition a worker and a person make; b is released and rescued; c and d wait at timed gates.
type shapes struct {
	*env
	m          *db.Machine
	a, b, c, d string
	la, lb     db.Lease
}

// coreOp is one operation of the core, run in the state the ops before it left.
type coreOp struct {
	name string
	do   func(t *testing.T, s *shapes)
}

// claim claims len(want) runs and checks they are want, oldest first.
func (s *shapes) claim(t *testing.T, want ...string) []db.Lease {
	t.Helper()
	runs, err := s.m.ClaimRuns(s.ctx, owner, ttl, db.Reach{}, len(want))
	if err != nil || len(runs) != len(want) {
		t.Fatalf("ClaimRuns(%d) = %d runs, %v", len(want), len(runs), err)
	}
	ls := make([]db.Lease, len(runs))
	for i, r := range runs {
		if r.ID != want[i] {
			t.Fatalf("claimed %s, want %s", r.ID, want[i])
		}
		ls[i] = r.Lease()
	}
	return ls
}

// timedGate is an approval gate asked now with a timeout and a reminder after the given delays.
func (s *shapes) timedGate(due, remind time.Duration) db.Pause {
	now := s.clock.Now()
	return db.Pause{Kind: db.PauseApproval, Node: "review", Message: "Ship it?", Since: now,
		DueAt: now.Add(due), RemindAt: now.Add(remind), OnTimeout: db.TimeoutReject}
}

func noErr[T any](t *testing.T, what string) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		return v
	}
}

var coreOps = []coreOp{
	{"claim a batch", func(t *testing.T, s *shapes) {
		s.a, s.b = s.create(t).ID, s.create(t).ID
		ls := s.claim(t, s.a, s.b)
		s.la, s.lb = ls[0], ls[1]
	}},
	{"heartbeat", func(t *testing.T, s *shapes) {
		s.clock.Advance(time.Second)
		if err := s.m.Heartbeat(s.ctx, s.la, ttl); err != nil {
			t.Fatal(err)
		}
	}},
	{"heartbeat under a lost lease", func(t *testing.T, s *shapes) {
		stale := s.la
		stale.Token = "stale"
		if err := s.m.Heartbeat(s.ctx, stale, ttl); !errors.Is(err, db.ErrLeaseLost) {
			t.Fatalf("Heartbeat with a stale token: %v, want ErrLeaseLost", err)
		}
	}},
	{"record the workspace", func(t *testing.T, s *shapes) {
		noErr[db.Run](t, "SetWorkspace")(s.m.SetWorkspace(s.ctx, s.la, db.Workspace{Path: "/w/a", Home: "home-1", Remote: "git@example.com:a"}))
	}},
	{"pause at a timed gate", func(t *testing.T, s *shapes) {
		noErr[db.Run](t, "PauseRun")(s.m.PauseRun(s.ctx, s.la, s.timedGate(time.Hour, time.Minute)))
	}},
	{"approve", func(t *testing.T, s *shapes) {
		g := db.GateResolution{RunID: s.a, Node: "review", Decision: db.DecisionApprove, By: "slack:U2"}
		if res := noErr[db.GateResult](t, "ResolveGate")(s.m.ResolveGate(s.ctx, g)); res.Run.Status != db.StatusQueued {
			t.Fatalf("the approved run is %s, want queued", res.Run.Status)
		}
	}},
	{"claim again, keeping the first start", func(t *testing.T, s *shapes) {
		s.clock.Advance(time.Second)
		s.la = s.claim(t, s.a)[0]
	}},
	{"pause for recovery", func(t *testing.T, s *shapes) {
		p := db.Pause{Kind: db.PauseRecovery, Node: "plan", Error: "claude: not found", ResumeHint: "install claude, then resume"}
		noErr[db.Run](t, "PauseRun")(s.m.PauseRun(s.ctx, s.la, p))
	}},
	{"resume fresh", func(t *testing.T, s *shapes) {
		noErr[db.Run](t, "ResumeFresh")(s.m.ResumeFresh(s.ctx, s.a, db.Actor{ID: "slack:U2"}))
	}},
	{"resume a gate pause", func(t *testing.T, s *shapes) {
		s.la = s.claim(t, s.a)[0]
		noErr[db.Run](t, "PauseRun")(s.m.PauseRun(s.ctx, s.la, s.timedGate(time.Hour, time.Hour)))
		if _, err := s.m.ResumeRun(s.ctx, s.a, db.Actor{ID: "slack:U2"}); !errors.As(err, new(*db.TransitionError)) {
			t.Fatalf("resuming a run at a gate: %v, want a TransitionError", err)
		}
		g := db.GateResolution{RunID: s.a, Node: "review", Decision: db.DecisionApprove, By: "slack:U2"}
		noErr[db.GateResult](t, "ResolveGate")(s.m.ResolveGate(s.ctx, g))
		s.la = s.claim(t, s.a)[0]
	}},
	{"fail", func(t *testing.T, s *shapes) {
		noErr[db.Run](t, "FailRun")(s.m.FailRun(s.ctx, s.la, db.RunError{Node: "test", Class: db.ClassPermanent, Message: "exit 1"}))
	}},
	{"resume a failed run", func(t *testing.T, s *shapes) {
		noErr[db.Run](t, "ResumeRun")(s.m.ResumeRun(s.ctx, s.a, db.Actor{ID: "slack:U2"}))
	}},
	{"complete", func(t *testing.T, s *shapes) {
		noErr[db.Run](t, "CompleteRun")(s.m.CompleteRun(s.ctx, s.claim(t, s.a)[0], "all green"))
	}},
	{"cancel a completed run", func(t *testing.T, s *shapes) {
		if _, err := s.m.CancelRun(s.ctx, s.a, db.Actor{ID: "slack:U2"}, "late"); !errors.As(err, new(*db.TransitionError)) {
			t.Fatalf("cancelling a completed run: %v, want a TransitionError", err)
		}
	}},
	{"release", func(t *testing.T, s *shapes) {
		noErr[db.Run](t, "ReleaseRun")(s.m.ReleaseRun(s.ctx, s.lb))
	}},
	{"rescue", func(t *testing.T, s *shapes) {
		s.claim(t, s.b)
		s.clock.Advance(2 * ttl)
		res := noErr[[]db.Rescue](t, "RescueExpired")(s.m.RescueExpired(s.ctx, 3))
		if len(res) != 1 || res[0].Run.ID != s.b || res[0].Exhausted {
			t.Fatalf("RescueExpired = %+v, want b re-queued", res)
		}
	}},
	{"rescue past the budget", func(t *testing.T, s *shapes) {
		s.claim(t, s.b)
		s.clock.Advance(2 * ttl)
		res := noErr[[]db.Rescue](t, "RescueExpired")(s.m.RescueExpired(s.ctx, 1))
		if len(res) != 1 || !res[0].Exhausted || res[0].Run.Status != db.StatusFailed {
			t.Fatalf("RescueExpired = %+v, want b failed, its budget spent", res)
		}
	}},
	{"a gate times out", func(t *testing.T, s *shapes) {
		s.c = s.create(t).ID
		s.fireGate(t, s.c, time.Minute, time.Hour, db.TimerTimeout, db.StatusCancelled)
	}},
	{"a gate reminds, then the run is cancelled", func(t *testing.T, s *shapes) {
		s.d = s.create(t).ID
		s.fireGate(t, s.d, time.Hour, time.Minute, db.TimerReminder, db.StatusPaused)
		noErr[db.Run](t, "CancelRun")(s.m.CancelRun(s.ctx, s.d, db.Actor{ID: "slack:U2"}, "not needed"))
	}},
}

// fireGate claims the queued run id, pauses it at a gate timing out after due and reminding after
// remind, lets two minutes pass and fires the timers: the one that fired is kind, and the run is
// left in status.
func (s *shapes) fireGate(t *testing.T, id string, due, remind time.Duration, kind db.GateTimerKind, status db.Status) {
	t.Helper()
	noErr[db.Run](t, "PauseRun")(s.m.PauseRun(s.ctx, s.claim(t, id)[0], s.timedGate(due, remind)))
	s.clock.Advance(2 * time.Minute)
	fired := noErr[[]db.GateTimer](t, "FireGateTimers")(s.m.FireGateTimers(s.ctx, db.Reach{}, nil))
	if len(fired) != 1 || fired[0].Kind != kind || fired[0].Run.ID != id || fired[0].Run.Status != status {
		t.Fatalf("FireGateTimers = %+v, want the %s of run %s, leaving it %s", fired, kind, id, status)
	}
}
