package metrics_test

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"threadflow/conversation"
	"threadflow/db"
	"threadflow/db/dbtest"
	"threadflow/metrics"
	"threadflow/orchestrator"
	"threadflow/orchestrator/dispatch"
	"threadflow/orchestrator/execution"
	"threadflow/orchestratortest"
	"threadflow/testkit"
)

// rig is the real orchestrator on a real SQLite store, observed by a Metrics.
type rig struct {
	t     *testing.T
	store db.Store
	m     *metrics.Metrics
	eng   *orchestratortest.Engine
}

func newRig(t *testing.T, workflows map[string]string, outbox conversation.Outbox) *rig {
	t.Helper()
	home := t.TempDir()
	dir := filepath.Join(home, "wf")
	files := map[string]string{}
	for name, src := range workflows {
		files[name+".yaml"] = src
	}
	orchestratortest.WriteWorkflows(t, dir, files)
	st := dbtest.SQLite(t, db.Options{})
	log := zaptest.NewLogger(t)
	r := &rig{t: t, store: st, m: metrics.New(st, log, nil)}
	r.eng = orchestratortest.Start(t, orchestrator.Config{
		Store: st, Catalogs: orchestratortest.Catalog{Home: home, Dir: dir}, Providers: orchestratortest.NoProviders{},
		Outboxes: map[string]conversation.Outbox{outbox.Platform(): outbox},
		Auth:     dispatch.NewAuth(nil, nil), Dirs: execution.Dirs{Home: home}, Log: log,
		Owner: "metrics-test", LeaseTTL: 10 * time.Second, Poll: 20 * time.Millisecond, Debounce: time.Millisecond,
		Observer: r.m,
	})
	return r
}

// run types a run command as a user of the outbox's platform and returns the run created.
func (r *rig) run(platform, name string) db.Run {
	r.t.Helper()
	r.eng.Dispatcher.Handle(context.Background(), conversation.Message{
		Address: conversation.Address{Platform: platform, ChannelID: "c"}, UserID: platform + ":u", Text: "/workflow run " + name, Direct: true})
	runs, err := r.store.ListRuns(context.Background(), db.RunFilter{Workflow: name})
	if err != nil || len(runs) == 0 {
		r.t.Fatalf("no run of %s was created (err %v)", name, err)
	}
	return runs[0]
}

func TestSeriesMoveWhenRunsHappen(t *testing.T) {
	r := newRig(t, map[string]string{
		"ok":    "name: ok\nnodes:\n  - id: a\n    bash: echo hi\n",
		"gated": "name: gated\nnodes:\n  - id: ask\n    approval: {message: \"ship?\"}\n  - id: b\n    depends_on: [ask]\n    bash: echo b\n",
	}, &orchestratortest.Outbox{Name: "test"})

	r.run("test", "ok")
	testkit.Eventually(t, "runs_total{ok,completed} to count the run", func() bool { return value(t, r.m, `threadflow_runs_total{state="completed",workflow="ok"}`) == 1 })

	gated := r.run("test", "gated")
	testkit.Eventually(t, "gates_waiting to show the paused run", func() bool { return value(t, r.m, "threadflow_gates_waiting") == 1 })
	if got := value(t, r.m, "threadflow_gate_oldest_age_seconds"); got < 0 {
		t.Errorf("gate_oldest_age_seconds = %v, want >= 0", got)
	}
	r.eng.Dispatcher.Handle(context.Background(), conversation.Message{Address: conversation.Address{Platform: "test", ChannelID: "c"},
		UserID: "test:u", Text: "/workflow approve " + gated.ID, Direct: true})
	testkit.Eventually(t, "the approved run to complete", func() bool {
		return value(t, r.m, `threadflow_runs_total{state="completed",workflow="gated"}`) == 1
	})

	checks := []struct{ series, want string }{
		{"threadflow_runs_total", `threadflow_runs_total{state="paused",workflow="gated"} 1`},
		{"threadflow_node_duration_seconds", `threadflow_node_duration_seconds_count{state="completed",workflow="ok"} 1`},
		{"threadflow_dispatch_duration_seconds", `threadflow_dispatch_duration_seconds_count{kind="command"} 3`},
		{"threadflow_gates_waiting", `threadflow_gates_waiting 0`},
		{"threadflow_gate_oldest_age_seconds", `threadflow_gate_oldest_age_seconds 0`},
		{"threadflow_active_leases", `threadflow_active_leases 0`},
	}
	for _, c := range checks {
		if text := scrape(t, r.m, c.series); !strings.Contains(text, c.want) {
			t.Errorf("/metrics does not show %s; %s series:\n%s", c.want, c.series, text)
		}
	}
}

func TestSendFailuresAreCounted(t *testing.T) {
	r := newRig(t, map[string]string{"ok": "name: ok\nnodes:\n  - id: a\n    bash: echo hi\n"},
		&orchestratortest.Outbox{Name: "down", Err: errors.New("platform is down")})
	r.run("down", "ok")
	testkit.Eventually(t, "send_failures_total{down} to count", func() bool {
		return value(t, r.m, `threadflow_send_failures_total{platform="down"}`) > 0
	})
}

// A message the platform refuses is given up on at once and counted.
func TestRefusedMessagesAreCountedAsOutboxFailures(t *testing.T) {
	r := newRig(t, map[string]string{"ok": "name: ok\nnodes:\n  - id: a\n    bash: echo hi\n"},
		&orchestratortest.Outbox{Name: "gone", Err: fmt.Errorf("%w: channel_not_found", conversation.ErrRefused)})
	r.run("gone", "ok")
	testkit.Eventually(t, "outbox_failed_total{announce} to count", func() bool {
		return value(t, r.m, `threadflow_outbox_failed_total{kind="announce"}`) > 0
	})
}

func TestCountersWithoutARun(t *testing.T) {
	m := metrics.New(dbtest.SQLite(t, db.Options{}), zaptest.NewLogger(t), nil)
	m.DuplicateDropped("slack")
	m.DuplicateDropped("slack")
	m.Rescued(3)
	m.Retried("deploy")
	m.TriggerFired("nightly/schedule", "schedule", db.FireStarted, "")
	m.TriggerFired("nightly/schedule", "schedule", db.FireSkipped, db.ReasonOverlap)
	m.TriggerRefused("deploy/hook", "bad_signature")
	tests := []struct{ series, want string }{
		{"threadflow_trigger_fires_total", `threadflow_trigger_fires_total{kind="schedule",outcome="skipped",trigger="nightly/schedule"} 1`},
		{"threadflow_trigger_skips_total", `threadflow_trigger_skips_total{reason="overlap",trigger="nightly/schedule"} 1`},
		{"threadflow_trigger_refusals_total", `threadflow_trigger_refusals_total{reason="bad_signature",trigger="deploy/hook"} 1`},
		{"threadflow_inbound_duplicates_dropped_total", `threadflow_inbound_duplicates_dropped_total{platform="slack"} 2`},
		{"threadflow_rescues_total", `threadflow_rescues_total 3`},
		{"threadflow_retries_total", `threadflow_retries_total{workflow="deploy"} 1`},
		{"threadflow_gates_waiting", `threadflow_gates_waiting 0`},
	}
	for _, tt := range tests {
		t.Run(tt.series, func(t *testing.T) {
			if text := scrape(t, m, tt.series); !strings.Contains(text, tt.want) {
				t.Errorf("want %s in:\n%s", tt.want, text)
			}
		})
	}
}

// catalog discovers the test's workflows on every call.
