// Package testkit holds what tests of several packages share, so each rule of a good test is
// written once: wait for a condition with a deadline instead of sleeping a guessed time, and skip
// a test that needs a missing tool only off CI. It is imported by tests only.
package testkit

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// Missing stops a test that needs something this machine lacks (PostgreSQL, Chromium, an AI CLI,
// git, a shell, root to mount a file system). why says what is missing and how to get it. On a
// developer's machine the test is skipped, saying why; on CI (CI=true) it fails, because .ci/run
// installs everything and a suite skipped there would print ok without having run. Every such
// skip goes through here.
func Missing(t testing.TB, why string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(why, args...)
	if os.Getenv("CI") == "true" {
		t.Fatalf("%s; CI=true, so this test must run here, not skip", msg)
	} else { // not after Fatalf: a TB whose Fatalf returns must not see a skip too
		t.Skip(msg)
	}
}

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

// ReceiveContaining reads updates until one contains want, and fails the test if the channel
// closes first or none does within limit: the wait of every live-stream test (SSE pages,
// websocket feeds), whose updates arrive as text.
func ReceiveContaining(t testing.TB, updates <-chan string, limit time.Duration, want string) {
	t.Helper()
	deadline := time.After(limit)
	for {
		select {
		case u, ok := <-updates:
			if !ok {
				t.Fatalf("the stream ended without an update containing %q", want)
			}
			if strings.Contains(u, want) {
				return
			}
		case <-deadline:
			t.Fatalf("no update containing %q within %s", want, limit)
		}
	}
}
