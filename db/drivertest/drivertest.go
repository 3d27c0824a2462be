// Package drivertest is the conformance suite of db.Driver, the layer under the transition core:
// every update shape db.Machine hands an engine runs through that engine's driver on a real
// database (a SQLite file, a PostgreSQL database) and is compared with a reference model of the
// documented data (model.go: what each RunUpdate guard and RunSet field means). storetest checks
// the Store contract from above; this suite names the field an engine's SQL got wrong.
package drivertest

import (
	"context"
	"testing"
	"time"

	"threadflow/db"
	"threadflow/db/storetest"
)

// Opener opens a fresh, migrated, empty store for one subtest and returns it with its engine's
// driver (the Driver of the store's Machine).
type Opener func(t *testing.T, opts db.Options) (db.Store, db.Driver)

// Run runs the suite against the engine open returns.
func Run(t *testing.T, open Opener) {
	for _, tc := range []struct {
		name string
		fn   func(t *testing.T, e *env)
	}{
		{"CoreShapes", testCoreShapes},
		{"Guards", testGuards},
		{"TransitAll", testTransitAll},
		{"RenewLeases", testRenewLeases},
		{"AppendLeased", testAppendLeased},
	} {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, newEnv(t, open)) })
	}
}

// start is microsecond-aligned and UTC, so times compare equal after a round trip.
var start = time.Date(2026, 11, 26, 9, 26, 53, 589793000, time.UTC)

const (
	ttl   = time.Minute
	owner = "replica-a"
	conv  = "slack:C1"
)

// env is one subtest's store, its engine's driver and the fake clock both run on.
type env struct {
	s     db.Store
	d     db.Driver
	clock *storetest.Clock
	ctx   context.Context
}

func newEnv(t *testing.T, open Opener) *env {
	clock := storetest.NewClock(start)
	s, d := open(t, db.Options{Now: clock.Now})
	e := &env{s: s, d: d, clock: clock, ctx: t.Context()}
	if _, err := s.EnsureConversation(e.ctx, db.Conversation{Platform: "slack", ChannelID: "C1"}); err != nil {
		t.Fatalf("EnsureConversation: %v", err)
	}
	return e
}

// create makes a queued run, a millisecond after the one before, so claims take them in order.
func (e *env) create(t *testing.T) db.Run {
	t.Helper()
	e.clock.Advance(time.Millisecond)
	return noErr[db.Run](t, "CreateRun")(e.s.CreateRun(e.ctx, db.NewRun{Workflow: "build", ConversationID: conv, UserID: "slack:U1"}))
}

// get reads a run back.
func (e *env) get(t *testing.T, id string) db.Run {
	t.Helper()
	return noErr[db.Run](t, "GetRun("+id+")")(e.s.GetRun(e.ctx, id))
}

// update runs u through the driver in a transaction of its own.
func (e *env) update(t *testing.T, u db.RunUpdate) (db.Run, bool) {
	t.Helper()
	var (
		r  db.Run
		ok bool
	)
	err := e.d.InTx(e.ctx, func(tx db.DriverTx) error {
		var err error
		r, ok, err = tx.UpdateRun(e.ctx, u)
		return err
	})
	if err != nil {
		t.Fatalf("UpdateRun(%+v): %v", u, err)
	}
	return r, ok
}
