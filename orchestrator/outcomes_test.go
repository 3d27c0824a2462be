package orchestrator_test

import (
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"threadflow/db"
	"threadflow/testkit/runevents"
)

// A failed node fails the run even when the clean-up after it ran and succeeded (GitHub Actions'
// semantics), also through a node the failure skipped; the notice names the node and its error.
func TestFailedNodeFailsTheRunAfterItsCleanUpRan(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		h.writeWorkflow("ci", `
name: ci
nodes:
  - id: build
    bash: echo "compile error in main.go" >&2; exit 2
  - id: test
    depends_on: [build]
    bash: echo tested
  - id: cleanup
    depends_on: [test]
    trigger_rule: all_done
    bash: echo cleaned
`)
		run := h.waitStatus(h.startRun("ci", "").ID, db.StatusCompleted, db.StatusFailed)
		if run.Status != db.StatusFailed {
			t.Fatalf("run is %s, want failed: build failed and is not continue_on_error", run.Status)
		}
		if e := run.Meta.LastError; e == nil || e.Node != "build" || !strings.Contains(e.Message, "compile error in main.go") {
			t.Fatalf("last error = %+v, want node build with its stderr", run.Meta.LastError)
		}
		ev := h.events(run.ID)
		if runevents.Count(ev, db.EventNodeCompleted, "cleanup") != 1 || runevents.Count(ev, db.EventNodeSkipped, "test") != 1 {
			t.Fatalf("want test skipped and cleanup completed: %v", eventTypes(ev))
		}
		msg := joined(h.waitMessage("failed at node build"))
		if !strings.Contains(msg, "compile error in main.go") {
			t.Fatalf("failure notice does not quote the error:\n%s", msg)
		}
		if len(h.out.Find("completed.")) != 0 {
			t.Fatalf("a failed run was announced as completed:\n%s", h.out.Dump())
		}
	})
}

// continue_on_error: the node's failure is shown and its dependents decide by their trigger
// rules, but the run completes.
func TestContinueOnErrorLetsTheRunComplete(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		h.writeWorkflow("lint", `
name: lint
nodes:
  - id: lint
    continue_on_error: true
    bash: echo "style nits" >&2; exit 1
  - id: report
    depends_on: [lint]
    trigger_rule: all_done
    bash: echo reported
`)
		run := h.waitStatus(h.startRun("lint", "").ID, db.StatusCompleted, db.StatusFailed)
		if run.Status != db.StatusCompleted || run.Meta.Output != "reported" {
			t.Fatalf("run is %s with output %q (%+v); want completed by report", run.Status, run.Meta.Output, run.Meta.LastError)
		}
		status := joined(h.say(admin, "", "/workflow status "+run.ID))
		if !strings.Contains(status, "✗ lint") {
			t.Fatalf("status does not show lint failed:\n%s", status)
		}
	})
}

// retry on a shell node retries any failure by default; each retry is said in the thread and shown
// by /workflow status with its reason, and the node's duration is the same number in both places.
func TestShellNodeRetriesAnyFailureAndSaysWhy(t *testing.T) {
	eachEngineSerial(t, func(t *testing.T, h *harness) {
		counter := filepath.Join(t.TempDir(), "tries")
		t.Setenv("COUNTER", counter)
		h.writeWorkflow("flaky", `
name: flaky
nodes:
  - id: skipme
    when: "$ARGUMENTS == 'never'"
    bash: echo never
  - id: flaky
    retry: {max_attempts: 3}
    bash: |
      echo x >> "$COUNTER"
      if [ "$ATTEMPT" -lt 3 ]; then echo "port 8080 busy on attempt $ATTEMPT" >&2; exit 1; fi
      echo up
`)
		run := h.waitCompleted(h.startRun("flaky", "").ID)
		assertLines(t, counter, 3)
		for _, want := range []string{"attempt 1 of 3 failed: exit status 1: port 8080 busy on attempt 1", "attempt 2 of 3 failed: exit status 1: port 8080 busy on attempt 2"} {
			h.waitMessage(want)
		}
		status := joined(h.say(admin, "", "/workflow status "+run.ID))
		for _, want := range []string{"attempt 1 failed, retried: exit status 1: port 8080 busy on attempt 1", "attempt 2 failed, retried: exit status 1: port 8080 busy on attempt 2"} {
			if !strings.Contains(status, want) {
				t.Fatalf("status lacks %q:\n%s", want, status)
			}
		}
		// One duration, shown alike: the live status message in chat and /workflow status.
		dur := regexp.MustCompile(`flaky \(attempt 3\) (\S+)`)
		h.waitFor("the final status message", func() bool { return len(h.out.Find(": completed")) > 0 })
		inChat := dur.FindStringSubmatch(joined(h.out.Find(": completed")))
		inStatus := dur.FindStringSubmatch(status)
		if inChat == nil || inStatus == nil || inChat[1] != inStatus[1] {
			t.Fatalf("duration in chat %v, in status %v; want one and the same\n%s\n%s", inChat, inStatus, h.out.Dump(), status)
		}
		// A skipped node has no duration (it once printed as 2562047h47m16.854775807s).
		if !regexp.MustCompile(`(?m)– skipme$`).MatchString(status) {
			t.Fatalf("skipped node's status line is not bare:\n%s", status)
		}
	})
}

// `on: transient` narrows a shell node's retries back to timeouts.
func TestRetryOnTransientDoesNotRetryAnExitStatus(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		h.writeWorkflow("strict", "name: strict\nnodes:\n  - id: once\n    retry: {max_attempts: 3, on: transient}\n    bash: exit 1\n")
		run := h.waitStatus(h.startRun("strict", "").ID, db.StatusFailed)
		if n := runevents.Count(h.events(run.ID), db.EventNodeStarted, "once"); n != 1 {
			t.Fatalf("once started %d times; `on: transient` must not retry an exit status", n)
		}
	})
}

// /workflow status right after a run finished lists it.
func TestStatusListsARunThatJustFinished(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		h.writeWorkflow("quick", "name: quick\nnodes:\n  - id: a\n    bash: echo done\n")
		run := h.waitStatus(h.startRun("quick", "").ID, db.StatusCompleted)
		got := joined(h.say(admin, "", "/workflow status"))
		if !strings.Contains(got, "Recently finished") || !strings.Contains(got, run.ID+" quick - completed") {
			t.Fatalf("status after the run finished:\n%s", got)
		}
		// How long it took, and how long ago that was: a duration, then an age.
		if !regexp.MustCompile(regexp.QuoteMeta(run.ID) + ` quick - completed in [0-9.]+m?s, [0-9]+s ago - by `).MatchString(got) {
			t.Errorf("the finished run's line does not say how long it took and when:\n%s", got)
		}
		if got := joined(h.say(admin, "", "/workflow status "+run.ID)); !regexp.MustCompile(`- completed in [0-9.]+m?s - started [0-9]+s ago by `).MatchString(got) {
			t.Errorf("the run's status does not say how long it took:\n%s", got)
		}
	})
}

// continue_on_error does not cover a failure only a person can fix: with the agent CLI missing, the
// run pauses for a resume instead of completing without its other nodes.
func TestContinueOnErrorStillPausesForAMissingProvider(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		missing := filepath.Join(t.TempDir(), "no-such-claude")
		h.providers.bin.Store(&missing)
		h.writeWorkflow("optional", `
name: optional
nodes:
  - id: summary
    continue_on_error: true
    prompt: summarise
  - id: after
    depends_on: [summary]
    trigger_rule: all_done
    bash: echo after
`)
		run := h.waitStatus(h.startRun("optional", "").ID, db.StatusPaused, db.StatusCompleted, db.StatusFailed)
		if run.Status != db.StatusPaused || run.Meta.Pause == nil || run.Meta.Pause.Kind != db.PauseRecovery {
			t.Fatalf("run is %s (%+v); want a recovery pause", run.Status, run.Meta.Pause)
		}
		if n := runevents.Count(h.events(run.ID), db.EventNodeStarted, "after"); n != 0 {
			t.Fatalf("after started %d times while the run waits for a person", n)
		}
	})
}

// /workflow status lists the newest active runs of a conversation and says how many more it left
// out, instead of showing 50 of 2,000 paused runs as if they were all (issue 34).
func TestStatusSaysHowManyActiveRunsItLeftOut(t *testing.T) {
	eachEngine(t, func(t *testing.T, h *harness) {
		h.writeWorkflow("gated", "name: gated\nnodes:\n  - id: ok\n    approval: {message: \"ok?\"}\n")
		const runs = 53
		for range runs {
			h.say(admin, "", "/workflow run gated --force") // a new run beside the paused ones
		}
		h.waitFor("every run paused at its gate", func() bool {
			n, err := h.store.CountRuns(t.Context(), db.RunFilter{Statuses: []db.Status{db.StatusPaused}})
			return err == nil && n[db.StatusPaused] == runs
		})
		got := joined(h.say(admin, "", "/workflow status"))
		if want := "…and 3 more active runs, not listed here."; !strings.Contains(got, want) {
			t.Fatalf("/workflow status with %d paused runs:\n%s\nwant it to say %q", runs, got, want)
		}
		if listed := strings.Count(got, " gated - "); listed != 50 {
			t.Errorf("/workflow status listed %d runs, want the newest 50", listed)
		}
	})
}
