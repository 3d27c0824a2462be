// Package testkit holds what tests of several packages share, so each rule of a good test is
// written once: wait for a condition with a deadline instead of sleeping a guessed time.
// It is imported by tests only.
package testkit

import (
	"testing"
	"time"
)

// Deadline bounds every wait. It is a failure bound, not a measurement: the machine running the
// tests may be slow and shared.
const Deadline = 30 * time.Second

// pollEvery is how often a condition is checked.
const pollEvery = 5 * time.Millisecond

// Eventually polls cond until it holds, and fails the test if it does not within Deadline. what
// names the condition in the failure ("the run to complete").
func Eventually(t testing.TB, what string, cond func() bool) {
	t.Helper()
	EventuallyWithin(t, Deadline, what, cond)
}

// EventuallyWithin is Eventually with a deadline of its own, for waits that are known to be long
// (hundreds of runs through crashes and recoveries).
func EventuallyWithin(t testing.TB, limit time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", limit, what)
		}
		time.Sleep(pollEvery) // polling interval of a condition wait, not a guess at a duration
	}
}
