package orchestrator_test

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"

	"threadflow/conversation"
	"threadflow/db"
	"threadflow/db/dbtest"
	"threadflow/orchestrator/execution"
	"threadflow/orchestrator/reporting"
)

// A run cancelled in another process (the dashboard of another replica, another terminal) loses
// its lease here by design: its execution ends with an info line, not the lease_lost warning a
// terminal would print among its replies, and the run's events say who cancelled it.
func TestARunCancelledElsewhereEndsWithoutAWarning(t *testing.T) {
	h := newHarness(t, dbtest.SQLite)
	core, logs := observer.New(zapcore.InfoLevel)
	h.cfg.Log = zap.New(core)
	h.restart()
	release := filepath.Join(t.TempDir(), "release")
	h.writeWorkflow("wait", "name: wait\nnodes:\n  - id: a\n    bash: |\n      echo started\n      while [ ! -e \"$ARGUMENTS\" ]; do sleep 0.05; done\n")
	h.say(admin, "", "/workflow run wait "+release)
	id := h.runs("wait")[0].ID
	h.waitStatus(id, db.StatusRunning)
	h.waitFor("the node's first line", func() bool {
		run, err := h.store.GetRun(context.Background(), id)
		ref, oerr := execution.NodeOutputFile(run, h.events(id), "a")
		return err == nil && oerr == nil && ref.Partial == "the node is still running" && ref.Bytes > 0
	})
	if _, err := h.store.CancelRun(context.Background(), id, db.Actor{ID: "web:alice"}, "abandoned"); err != nil { // as another process does
		t.Fatal(err)
	}
	if err := os.WriteFile(release, nil, 0o644); err != nil { // the node ends; recording it finds the lease gone
		t.Fatal(err)
	}
	h.waitFor("the execution's end", func() bool { return logs.FilterMessage("orchestrator.run_abandoned").Len() == 1 })
	if n := logs.FilterMessage("orchestrator.lease_lost").Len(); n != 0 {
		t.Errorf("%d lease_lost warnings for a run cancelled elsewhere", n)
	}
	c, ok := reporting.LastCancellation(h.events(id))
	if cause := c.Cause().String(); !ok || !reflect.DeepEqual(c.By, conversation.Person{ID: "web:alice"}) || c.Gate != "" ||
		!strings.HasPrefix(cause, "by ") || !strings.Contains(cause, "alice") || !strings.HasSuffix(cause, " (abandoned)") {
		t.Errorf("LastCancellation = %+v, %v, Cause %q; want by alice (abandoned)", c, ok, cause)
	}
}

// A rejection is told as one: who rejected which gate, and why.
func TestACancellationByRejectionNamesTheGate(t *testing.T) {
	h := newHarness(t, dbtest.SQLite)
	h.writeWorkflow("gated", "name: gated\nnodes:\n  - id: ok\n    approval: {message: \"ok?\"}\n")
	h.say(admin, "", "/workflow run gated")
	id := h.runs("gated")[0].ID
	h.waitStatus(id, db.StatusPaused)
	h.say(ops, "", "/workflow reject "+id+" not on a Friday")
	h.waitStatus(id, db.StatusCancelled)
	c, ok := reporting.LastCancellation(h.events(id))
	if cause := c.Cause().String(); !ok || c.Gate != "ok" || !strings.Contains(cause, "ops, who rejected ok: not on a Friday") {
		t.Errorf("LastCancellation = %+v, %v, Cause %q; want ops's rejection of ok", c, ok, cause)
	}
}
