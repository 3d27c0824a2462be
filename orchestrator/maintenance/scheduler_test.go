package maintenance_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"threadflow/db"
	"threadflow/db/dbtest"
	"threadflow/db/storetest"
	"threadflow/orchestrator/execution"
	"threadflow/orchestrator/maintenance"
	"threadflow/orchestrator/reporting"
	"threadflow/workflow"
)

// schedRig is a scheduler on a real SQLite store whose clock the test moves.
type schedRig struct {
	t     *testing.T
	ctx   context.Context
	clock *storetest.Clock
	store db.Store
	sched *maintenance.Scheduler
}

type fixedCatalog struct{ c *workflow.Catalog }

func (f fixedCatalog) Catalog() *workflow.Catalog { return f.c }

// newSchedRig loads one workflow file with its triggers, with the clock at start.
func newSchedRig(t *testing.T, start time.Time, src string) *schedRig {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "job.yaml"), []byte(src), 0o600); err != nil {
		t.Fatal(err)
	}
	cat, errs := workflow.Discover("", []string{dir})
	if len(errs) > 0 {
		t.Fatal(errs)
	}
	clock := storetest.NewClock(start)
	st := dbtest.SQLite(t, db.Options{Now: clock.Now})
	tr := &maintenance.Triggers{Store: st, Reporter: &reporting.Reporter{}, Dirs: execution.Dirs{Home: dir}, Log: zap.NewNop()}
	return &schedRig{t: t, ctx: t.Context(), clock: clock, store: st,
		sched: &maintenance.Scheduler{Triggers: tr, Catalogs: fixedCatalog{cat}, Log: zap.NewNop(), Now: clock.Now}}
}

// until looks every step until the clock reaches end, as the scheduler's loop would.
func (r *schedRig) until(end time.Time, step time.Duration) {
	for !r.clock.Now().After(end) {
		r.sched.Once(r.ctx)
		r.clock.Advance(step)
	}
}

// fires are the trigger's fires, oldest first.
func (r *schedRig) fires(trigger string) []db.TriggerFire {
	r.t.Helper()
	fs, err := r.store.TriggerFires(r.ctx, trigger, 1000)
	if err != nil {
		r.t.Fatal(err)
	}
	for i, j := 0, len(fs)-1; i < j; i, j = i+1, j-1 {
		fs[i], fs[j] = fs[j], fs[i]
	}
	return fs
}

// wantFires checks the fires' scheduled times (UTC), outcomes and reasons.
func (r *schedRig) wantFires(trigger string, want ...string) []db.TriggerFire {
	r.t.Helper()
	fs := r.fires(trigger)
	var got []string
	for _, f := range fs {
		s := f.ScheduledAt.UTC().Format("01-02 15:04:05") + " " + string(f.Outcome)
		if f.Reason != "" {
			s += " " + f.Reason
		}
		got = append(got, s)
	}
	if len(got) != len(want) {
		r.t.Fatalf("fires of %s:\n%q\nwant\n%q", trigger, got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			r.t.Fatalf("fires of %s:\n%q\nwant\n%q", trigger, got, want)
		}
	}
	return fs
}

func (r *schedRig) end(runID string) {
	r.t.Helper()
	if _, err := r.store.CancelRun(r.ctx, runID, db.Actor{ID: "console:test"}, "done"); err != nil {
		r.t.Fatal(err)
	}
}

const jobNodes = "nodes:\n  - id: a\n    bash: echo hi\n"

// TestScheduleAcrossDST: times are read in the schedule's time zone as the cron library and time
// define them: 09:00 in Berlin is 08:00 UTC before the spring change and 07:00 after; 02:30 does
// not exist on the night clocks go forward (no fire) and happens twice when they go back (two).
func TestScheduleAcrossDST(t *testing.T) {
	t.Parallel()
	src := "name: job\ntriggers:\n" +
		"  - schedule: {name: nine, cron: \"0 9 * * *\", timezone: Europe/Berlin, post_to: web, overlap: allow}\n" +
		"  - schedule: {name: night, cron: \"30 2 * * *\", timezone: Europe/Berlin, post_to: web, overlap: allow}\n" + jobNodes
	r := newSchedRig(t, time.Date(2026, 3, 27, 12, 0, 0, 0, time.UTC), src)
	r.until(time.Date(2026, 3, 30, 12, 0, 0, 0, time.UTC), 10*time.Minute)
	r.wantFires("job/nine", "03-28 08:00:00 started", "03-29 07:00:00 started", "03-30 07:00:00 started")
	r.wantFires("job/night", "03-28 01:30:00 started", "03-30 00:30:00 started")

	r = newSchedRig(t, time.Date(2026, 10, 24, 12, 0, 0, 0, time.UTC), src)
	r.until(time.Date(2026, 10, 26, 12, 0, 0, 0, time.UTC), 10*time.Minute)
	r.wantFires("job/nine", "10-25 08:00:00 started", "10-26 08:00:00 started")
	r.wantFires("job/night", "10-25 00:30:00 started", "10-25 01:30:00 started", "10-26 01:30:00 started")
}

// TestScheduleClockChanges: a clock set back does not fire a time again, nor times before the
// last fire; a clock jumping forward past a few times is a downtime: one run (catch_up one).
// A looked-at second that came late (the look itself was slow) still fires each time it owes.
func TestScheduleClockChanges(t *testing.T) {
	t.Parallel()
	src := "name: job\ntriggers:\n  - schedule: {cron: \"*/10 * * * *\", post_to: web, overlap: allow}\n" + jobNodes
	start := time.Date(2026, 5, 1, 10, 0, 30, 0, time.UTC)
	r := newSchedRig(t, start, src)
	r.until(start.Add(21*time.Minute), time.Minute) // fires 10:10 and 10:20
	r.clock.Advance(-15 * time.Minute)              // NTP sets it back to 10:07
	r.until(start.Add(22*time.Minute), time.Minute)
	r.wantFires("job/schedule", "05-01 10:10:00 started", "05-01 10:20:00 started")
	r.clock.Advance(35 * time.Minute) // 10:57: 10:30, 10:40 missed, 10:50 too late
	r.sched.Once(r.ctx)
	r.wantFires("job/schedule", "05-01 10:10:00 started", "05-01 10:20:00 started", "05-01 10:50:00 started")

	fast := newSchedRig(t, start, "name: job\ntriggers:\n  - schedule: {cron: \"* * * * * *\", post_to: web, overlap: allow}\n"+jobNodes)
	fast.sched.Once(fast.ctx)                   // first seen at 10:00:30
	fast.clock.Advance(3500 * time.Millisecond) // one look 3.5 s later owes three seconds
	fast.sched.Once(fast.ctx)
	fast.wantFires("job/schedule", "05-01 10:00:31 started", "05-01 10:00:32 started", "05-01 10:00:33 started")
}

// TestScheduleOverlap: skip records a skipped fire while the previous run has not ended; queue
// keeps one fire waiting (a further one is skipped) and starts it once the run ends (then the
// next fire waits behind it); allow starts
// every time.
func TestScheduleOverlap(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 5, 1, 10, 0, 30, 0, time.UTC)
	for _, tc := range []struct {
		overlap string
		want    []string
	}{
		{"skip", []string{"05-01 10:01:00 started", "05-01 10:02:00 skipped overlap", "05-01 10:03:00 skipped overlap", "05-01 10:04:00 started"}},
		{"queue", []string{"05-01 10:01:00 started", "05-01 10:02:00 started", "05-01 10:03:00 skipped already_waiting", "05-01 10:04:00 waiting"}},
		{"allow", []string{"05-01 10:01:00 started", "05-01 10:02:00 started", "05-01 10:03:00 started", "05-01 10:04:00 started"}},
	} {
		t.Run(tc.overlap, func(t *testing.T) {
			r := newSchedRig(t, start, "name: job\ntriggers:\n  - schedule: {cron: \"* * * * *\", post_to: web, overlap: "+tc.overlap+"}\n"+jobNodes)
			r.until(start.Add(3*time.Minute), time.Minute) // 10:01, 10:02, 10:03
			first := r.fires("job/schedule")[0]
			r.end(first.RunID) // the first run ends between 10:03 and 10:04
			r.until(start.Add(4*time.Minute), time.Minute)
			fs := r.wantFires("job/schedule", tc.want...)
			if tc.overlap == "queue" && fs[1].RunID == "" {
				t.Error("the waiting fire started no run")
			}
		})
	}
}

// TestScheduleCatchUp: after a downtime, catch_up one starts one run for the missed times (at the
// latest), catch_up none records the latest as skipped and starts none; both then fire on time.
func TestScheduleCatchUp(t *testing.T) {
	t.Parallel()
	start := time.Date(2026, 5, 1, 9, 59, 0, 0, time.UTC)
	for _, tc := range []struct{ catchUp, missed string }{{"one", "started"}, {"none", "skipped missed"}} {
		t.Run(tc.catchUp, func(t *testing.T) {
			r := newSchedRig(t, start, "name: job\ntriggers:\n  - schedule: {cron: \"0 * * * *\", post_to: web, overlap: allow, catch_up: "+tc.catchUp+"}\n"+jobNodes)
			r.until(start.Add(2*time.Minute), time.Minute) // 10:00 fires
			r.clock.Advance(5 * time.Hour)                 // down from 10:01 to 15:02
			r.sched.Once(r.ctx)
			r.until(start.Add(6*time.Hour+2*time.Minute), time.Minute) // 16:00 fires
			fs := r.wantFires("job/schedule", "05-01 10:00:00 started", "05-01 15:00:00 "+tc.missed, "05-01 16:00:00 started")
			runs, err := r.store.ListRuns(r.ctx, db.RunFilter{Workflow: "job"})
			if err != nil || len(runs) != map[string]int{"one": 3, "none": 2}[tc.catchUp] {
				t.Errorf("runs = %d, %v", len(runs), err)
			}
			if run := runs[0]; run.UserID != "trigger:job/schedule" || run.ConversationID != "web:#runs" || fs[2].RunID != run.ID {
				t.Errorf("run %+v", run)
			}
		})
	}
}

// TestFiredRunsTakeTypedInputs: a trigger's args reach a typed workflow as its inputs, checked by
// the rules a typed command meets (named args by name, text args as words); a value the inputs
// refuse is the sender's mistake and writes nothing.
func TestFiredRunsTakeTypedInputs(t *testing.T) {
	t.Parallel()
	const inputs = "inputs:\n  - {name: version, pattern: 'v[0-9]+'}\n  - {name: env, type: choice, choices: [staging, prod], default: staging}\n"
	r := newSchedRig(t, time.Date(2026, 5, 1, 10, 0, 30, 0, time.UTC), "name: job\n"+inputs+
		"triggers:\n  - webhook: {name: deploy, secret_env: JOB_HOOK_SECRET, post_to: web, args: {version: \"${{ payload.version }}\", env: \"${{ payload.env }}\"}}\n"+jobNodes)
	wf, ok := r.sched.Catalogs.Catalog().Get("job")
	if !ok {
		t.Fatal("workflow job was not loaded")
	}
	tr := wf.Triggers[0]
	fire := func(id string, payload map[string]any) (db.FireResult, error) {
		return r.sched.Triggers.Fire(r.ctx, wf, tr, maintenance.Delivery{Key: db.DeliveryKey(id), Event: "deploy", Payload: []byte("{}"), Decoded: payload})
	}
	res, err := fire("d1", map[string]any{"version": "v12", "env": "prod"})
	if err != nil {
		t.Fatal(err)
	}
	run, err := r.store.GetRun(r.ctx, res.Run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if run.Inputs["version"] != "v12" || run.Inputs["env"] != "prod" {
		t.Errorf("the fired run's inputs are %v, want version=v12 env=prod", run.Inputs)
	}
	_, err = fire("d2", map[string]any{"version": "12", "env": "prod"})
	var bad *maintenance.ArgsError
	if !errors.As(err, &bad) || !strings.Contains(bad.Msg, "version") {
		t.Fatalf("a version the pattern refuses gave %v, want an ArgsError naming the input", err)
	}
	if fs := r.fires("job/deploy"); len(fs) != 1 {
		t.Errorf("%d fires recorded, want only the valid one", len(fs))
	}
}
