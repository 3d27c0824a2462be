// Package storetest is the conformance suite of db.Store. Every engine's tests call Run with a
// function that opens a fresh, migrated, empty store; the suite is the executable form of the
// contract documented in package db, so the engines cannot drift apart.
package storetest

import (
	"context"
	"testing"
	"time"

	"threadflow/db"
)

// Opener opens a fresh store on an empty database for one subtest and arranges its cleanup.
type Opener func(t *testing.T, opts db.Options) db.Store

// Run runs the whole conformance suite against the engine that open returns.
func Run(t *testing.T, open Opener) {
	groups := []struct {
		name  string
		tests []test
	}{
		{"Transitions", transitionTests()},
		{"Concurrency", concurrencyTests()},
		{"Leases", leaseTests()},
		{"Events", eventTests()},
		{"Gates", gateTests()},
		{"GatePolicy", gatePolicyTests()},
		{"GateTimers", gateTimerTests()},
		{"Queries", queryTests()},
		{"Records", recordTests()},
		{"KeptInbound", keptInboundTests()},
		{"Reach", reachTests()},
		{"Transcripts", transcriptTests()},
		{"Workspaces", workspaceTests()},
		{"Outbox", outboxTests()},
		{"Triggers", triggerTests()},
		{"Prune", pruneTests()},
		{"Usage", usageTests()},
		{"Groups", groupTests()},
		{"Children", childTests()},
	}
	for _, g := range groups {
		t.Run(g.name, func(t *testing.T) {
			for _, tc := range g.tests {
				t.Run(tc.name, func(t *testing.T) { tc.fn(t, newEnv(t, open)) })
			}
		})
	}
}

// test is one subtest; it gets a fresh store.
type test struct {
	name string
	fn   func(t *testing.T, e *env)
}

// start is microsecond-aligned and UTC so stored times compare equal after a round trip.
var start = time.Date(2025, 3, 14, 9, 26, 53, 589793000, time.UTC)

// leaseTTL is the lease duration the suite claims with.
const leaseTTL = time.Minute

// env is one subtest's store, fake clock and context.
type env struct {
	s     db.Store
	clock *Clock
	ctx   context.Context
}

func newEnv(t *testing.T, open Opener) *env {
	t.Helper()
	clock := NewClock(start)
	return &env{s: open(t, db.Options{Now: clock.Now}), clock: clock, ctx: t.Context()}
}
