package test

import (
	"fmt"
	"maps"
	"sort"
	"testing"
	"time"

	"threadflow/db"
	"threadflow/db/dbtest"
	"threadflow/testkit"
	"threadflow/testkit/botproc"
)

// scheduleSpan is how long the replicas fire the per-second schedule, one of them killed half-way:
// the 30 seconds the issue asks for.
const scheduleSpan = 30 * time.Second

// TestScheduleAcrossReplicas: three replicas on one PostgreSQL fire a schedule of every second (the
// cron library's seconds field) for 30 s, one SIGKILLed half-way: each scheduled second has
// exactly one fire and one run, and none is missing.
func TestScheduleAcrossReplicas(t *testing.T) {
	t.Parallel()
	env := botproc.Env(t)
	env["DATABASE_URL"] = dbtest.PostgresDatabase(t)
	env["WORKFLOWS_DIR"] = workflowDir(t, map[string]string{"tick.yaml": `name: tick
description: Every second.
triggers:
  - schedule: {cron: "* * * * * *", post_to: web, overlap: allow}
nodes:
  - id: tock
    bash: echo tock
`})
	st := openStore(t, env)
	var replicas []*botproc.Process
	for r := range 3 {
		renv := maps.Clone(env)
		renv["REPLICA_ID"], renv["HOME"] = fmt.Sprintf("replica-%d", r), t.TempDir()
		replicas = append(replicas, botproc.Start(t, renv))
	}
	fires := func() []db.TriggerFire {
		fs, err := st.TriggerFires(t.Context(), "tick/schedule", 1000)
		if err != nil {
			t.Fatal(err)
		}
		sort.Slice(fs, func(i, j int) bool { return fs[i].ScheduledAt.Before(fs[j].ScheduledAt) })
		return fs
	}
	reached := func(d time.Duration) func() bool {
		return func() bool {
			fs := fires()
			return len(fs) > 0 && !fs[len(fs)-1].ScheduledAt.Before(fs[0].ScheduledAt.Add(d))
		}
	}
	testkit.EventuallyWithin(t, scheduleSpan, "the first fire", reached(0))
	testkit.EventuallyWithin(t, scheduleSpan, "half the span", reached(scheduleSpan/2))
	replicas[0].Kill()
	testkit.EventuallyWithin(t, 2*scheduleSpan, "the whole span", reached(scheduleSpan))
	for _, r := range replicas[1:] {
		r.Stop()
	}

	fs := fires()
	first := fs[0].ScheduledAt
	runs := map[string]bool{}
	for i, f := range fs {
		if want := first.Add(time.Duration(i) * time.Second); !f.ScheduledAt.Equal(want) {
			t.Fatalf("fire %d is for %s, want %s: a second was lost or fired twice", i, f.ScheduledAt, want)
		}
		if f.Outcome != db.FireStarted || f.RunID == "" || runs[f.RunID] {
			t.Fatalf("fire for %s: %+v, want its own started run", f.ScheduledAt, f)
		}
		runs[f.RunID] = true
	}
	all, err := st.ListRuns(t.Context(), db.RunFilter{Workflow: "tick", Limit: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != len(fs) {
		t.Fatalf("%d runs for %d fires", len(all), len(fs))
	}
	for _, r := range all {
		if !runs[r.ID] || r.UserID != "trigger:tick/schedule" {
			t.Errorf("run %s (by %s) belongs to no fire", r.ID, r.UserID)
		}
	}
	t.Logf("%d seconds fired once each, from %s", len(fs), first.Format(time.TimeOnly))
}
