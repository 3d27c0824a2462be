package storetest

import (
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"threadflow/db"
)

// Conversations every fixture run lives in.
const (
	channelConv = "slack:C1"
	threadConv  = "slack:C1:T1"
	otherConv   = "slack:C2"
	worker      = "worker-1"
)

// fixture names a run state the suite can build; paused runs differ by pause kind.
type fixture string

const (
	fxQueued    fixture = "queued"
	fxRunning   fixture = "running"
	fxApproval  fixture = "paused-approval"
	fxLoop      fixture = "paused-loop"
	fxRecovery  fixture = "paused-recovery"
	fxFailed    fixture = "failed"
	fxCompleted fixture = "completed"
	fxCancelled fixture = "cancelled"
)

var allFixtures = []fixture{fxQueued, fxRunning, fxApproval, fxLoop, fxRecovery, fxFailed, fxCompleted, fxCancelled}

// status is the status a fixture's run is in.
func (f fixture) status() db.Status {
	switch f {
	case fxApproval, fxLoop, fxRecovery:
		return db.StatusPaused
	}
	return db.Status(f)
}

// pauseKind is the pause kind of a paused fixture, empty otherwise.
func (f fixture) pauseKind() db.PauseKind {
	switch f {
	case fxApproval:
		return db.PauseApproval
	case fxLoop:
		return db.PauseLoop
	case fxRecovery:
		return db.PauseRecovery
	}
	return ""
}

// conversations makes sure the fixture conversations exist.
func (e *env) conversations(t *testing.T) {
	t.Helper()
	for _, c := range []db.Conversation{
		{ID: channelConv, Platform: "slack", ChannelID: "C1"},
		{ID: threadConv, Platform: "slack", ChannelID: "C1", ThreadID: "T1", ParentID: channelConv},
		{ID: otherConv, Platform: "slack", ChannelID: "C2"},
	} {
		if _, err := e.s.EnsureConversation(e.ctx, c); err != nil {
			t.Fatalf("EnsureConversation(%s): %v", c.ID, err)
		}
	}
}

// newRun is the NewRun fixtures create; mod may adjust it.
func newRun(mod func(*db.NewRun)) db.NewRun {
	n := db.NewRun{
		Workflow:             "build",
		ConversationID:       threadConv,
		ParentConversationID: channelConv,
		UserID:               "slack:U1",
		UserName:             "Ann Lee",
		UserMessage:          `fix "the" bug`,
		WorkingPath:          "/tmp/work/build",
		WorkflowSource:       []byte("name: build\nnodes: []\n"),
	}
	if mod != nil {
		mod(&n)
	}
	return n
}

// create inserts a queued run.
func (e *env) create(t *testing.T, mod func(*db.NewRun)) db.Run {
	t.Helper()
	e.conversations(t)
	r, err := e.s.CreateRun(e.ctx, newRun(mod))
	if err != nil {
		t.Fatalf("CreateRun: %v", err)
	}
	return r
}

// claim claims the oldest queued run and checks it is want.
func (e *env) claim(t *testing.T, want string) db.Run {
	t.Helper()
	r, err := e.s.ClaimRun(e.ctx, worker, leaseTTL, db.Reach{})
	if err != nil {
		t.Fatalf("ClaimRun: %v", err)
	}
	if r.ID != want {
		t.Fatalf("ClaimRun claimed %s, want %s", r.ID, want)
	}
	return r
}

// gatePause is the pause of an approval or loop gate at node "review".
func gatePause(kind db.PauseKind) db.Pause {
	return db.Pause{Kind: kind, Node: "review", Message: "Ship it?", SessionID: "sess-1"}
}

// recoveryPause is a resumable failure before any progress.
var recoveryPause = db.Pause{Kind: db.PauseRecovery, Node: "plan", Error: "claude: executable not found", ResumeHint: "install claude, then resume"}

// runIn builds a run in the fixture's state through the store's own transitions, and returns it
// with the lease its worker held (zero when it was never claimed).
func (e *env) runIn(t *testing.T, f fixture, mod func(*db.NewRun)) (db.Run, db.Lease) {
	t.Helper()
	r := e.create(t, mod)
	if f == fxQueued {
		return r, db.Lease{}
	}
	if f == fxCancelled {
		return must(t)(e.s.CancelRun(e.ctx, r.ID, db.Actor{ID: "slack:U9"}, "not needed")), db.Lease{}
	}
	r = e.claim(t, r.ID)
	l := r.Lease()
	switch f {
	case fxApproval:
		r = must(t)(e.s.PauseRun(e.ctx, l, gatePause(db.PauseApproval)))
	case fxLoop:
		r = must(t)(e.s.PauseRun(e.ctx, l, gatePause(db.PauseLoop)))
	case fxRecovery:
		r = must(t)(e.s.PauseRun(e.ctx, l, recoveryPause))
	case fxFailed:
		r = must(t)(e.s.FailRun(e.ctx, l, db.RunError{Node: "test", Class: db.ClassPermanent, Message: "exit 1"}))
	case fxCompleted:
		r = must(t)(e.s.CompleteRun(e.ctx, l, "done"))
	}
	if r.Status != f.status() {
		t.Fatalf("fixture %s: run is %s", f, r.Status)
	}
	return r, l
}

// must returns a function that fails the test on err and otherwise returns the run.
func must(t *testing.T) func(db.Run, error) db.Run {
	return func(r db.Run, err error) db.Run {
		t.Helper()
		if err != nil {
			t.Fatalf("fixture transition: %v", err)
		}
		return r
	}
}

// get reads a run back.
func (e *env) get(t *testing.T, id string) db.Run {
	t.Helper()
	r, err := e.s.GetRun(e.ctx, id)
	if err != nil {
		t.Fatalf("GetRun(%s): %v", id, err)
	}
	return r
}

// events reads a run's events and checks that seq runs 1, 2, 3... without gaps.
func (e *env) events(t *testing.T, id string) []db.Event {
	t.Helper()
	evs, err := e.s.Events(e.ctx, id)
	if err != nil {
		t.Fatalf("Events(%s): %v", id, err)
	}
	for i, ev := range evs {
		if ev.Seq != int64(i+1) || ev.RunID != id {
			t.Fatalf("event %d of run %s has run %s seq %d, want seq %d", i, id, ev.RunID, ev.Seq, i+1)
		}
	}
	return evs
}

// last returns the run's latest event.
func (e *env) last(t *testing.T, id string) db.Event {
	t.Helper()
	evs := e.events(t, id)
	if len(evs) == 0 {
		t.Fatalf("run %s has no events", id)
	}
	return evs[len(evs)-1]
}

// countEvents counts the run's events of type typ.
func (e *env) countEvents(t *testing.T, id string, typ db.EventType) int {
	t.Helper()
	n := 0
	for _, ev := range e.events(t, id) {
		if ev.Type == typ {
			n++
		}
	}
	return n
}

// wantTransitionError checks err is a *TransitionError for run id that found status found.
func wantTransitionError(t *testing.T, err error, id string, found db.Status, lease bool) {
	t.Helper()
	var te *db.TransitionError
	if !errors.As(err, &te) {
		t.Fatalf("got error %v, want a *db.TransitionError (found %q)", err, found)
	}
	if te.RunID != id || te.Found != found || te.Lease != lease {
		t.Fatalf("got TransitionError{RunID %s, Found %q, Lease %v}, want {%s, %q, %v}", te.RunID, te.Found, te.Lease, id, found, lease)
	}
	if !errors.Is(err, db.ErrInvalidTransition) {
		t.Fatalf("%v does not match ErrInvalidTransition", err)
	}
	if lease && !errors.Is(err, db.ErrLeaseLost) {
		t.Fatalf("%v does not match ErrLeaseLost", err)
	}
}

// dataField decodes the event's data and returns one field (nil when absent).
func dataField(t *testing.T, ev db.Event, key string) any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(ev.Data, &m); err != nil {
		t.Fatalf("event %s data %q is not a JSON object: %v", ev.Type, ev.Data, err)
	}
	return m[key]
}

// retire cancels a run that is not terminal yet, so a later fixture in the same store claims its
// own run and not a leftover.
func (e *env) retire(t *testing.T, id string) {
	t.Helper()
	r, err := e.s.GetRun(e.ctx, id)
	if err == nil && !r.Status.Terminal() {
		_, err = e.s.CancelRun(e.ctx, id, db.Actor{ID: "storetest"}, "retired")
	}
	if err != nil {
		t.Errorf("retire %s: %v", id, err)
	}
}

// equalJSON reports whether two JSON documents hold the same value.
func equalJSON(a, b []byte) bool {
	var x, y any
	return json.Unmarshal(a, &x) == nil && json.Unmarshal(b, &y) == nil && reflect.DeepEqual(x, y)
}
