package maintenance

import (
	"context"
	"time"

	"go.uber.org/zap"

	"threadflow/db"
	"threadflow/workflow"
)

// Scheduler fires the workflows' schedules. Every replica runs one: each scheduled time is one fire
// keyed by (trigger, time), recorded with its run by whichever replica gets there first
// (db.Machine.FireTrigger), so the schedule fires once however many replicas look and whichever
// of them dies. Only servers run it; the terminal's `bot chat` does not.
type Scheduler struct {
	Triggers *Triggers
	Catalogs Catalogs
	Log      *zap.Logger
	// Now is the clock (time.Now when nil): tests move it to cross DST changes and downtimes.
	Now func() time.Time
	// Late is how long after its time a scheduled time still fires as on time (default 1 minute);
	// a time seen later than that was missed (the bot was down), and catch_up decides.
	Late time.Duration
	// MaxWait is the longest wait between looks (default 10 s): edits to workflows, and earlier
	// runs ending while a fire waits (overlap: queue), are seen within it.
	MaxWait time.Duration

	noted map[string]bool // triggers recorded in the database by this process (NoteTriggers)
}

// Run fires schedules until ctx ends, waking at the next scheduled time or after MaxWait.
func (s *Scheduler) Run(ctx context.Context) {
	loop(ctx, nil, s.Once, s.sleep)
}

func (s *Scheduler) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func (s *Scheduler) late() time.Duration {
	if s.Late > 0 {
		return s.Late
	}
	return time.Minute
}

func (s *Scheduler) maxWait() time.Duration {
	if s.MaxWait > 0 {
		return s.MaxWait
	}
	return 10 * time.Second
}

// schedule is one schedule trigger of a loaded workflow.
type schedule struct {
	wf *workflow.Workflow
	tr *workflow.Trigger
}

func (s *Scheduler) schedules() []schedule {
	var out []schedule
	for _, wf := range s.Catalogs.Catalog().List() {
		for _, tr := range wf.Triggers {
			if tr.Kind == workflow.TriggerSchedule && tr.Schedule != nil {
				out = append(out, schedule{wf, tr})
			}
		}
	}
	return out
}

// sleep waits until just after the next scheduled time, at most MaxWait.
func (s *Scheduler) sleep(context.Context) time.Duration {
	now, wait := s.now(), s.maxWait()
	for _, sc := range s.schedules() {
		if next := sc.tr.Next(now); !next.IsZero() {
			wait = min(wait, next.Sub(now)+time.Millisecond)
		}
	}
	return max(wait, 0)
}

// Once fires every schedule that is due at now, and starts the waiting fires whose earlier runs
// ended.
func (s *Scheduler) Once(ctx context.Context) {
	scheds := s.schedules()
	if len(scheds) == 0 {
		return
	}
	if err := s.note(ctx, scheds); err != nil {
		s.warn(ctx, "", err)
		return
	}
	states, err := s.Triggers.Store.TriggerStates(ctx)
	if err != nil {
		s.warn(ctx, "", err)
		return
	}
	now := s.now()
	for _, sc := range scheds {
		st := states[sc.tr.ID(sc.wf.Name)]
		if st.Waiting {
			if err := s.Triggers.startWaiting(ctx, sc.wf, sc.tr); err != nil {
				s.warn(ctx, sc.tr.ID(sc.wf.Name), err)
			}
		}
		for _, d := range s.due(sc.tr, st, now) {
			if _, err := s.Triggers.Fire(ctx, sc.wf, sc.tr, d); err != nil {
				s.warn(ctx, sc.tr.ID(sc.wf.Name), err)
			}
		}
	}
}

// note records the triggers this process has not recorded yet, so a new schedule counts its
// missed times only from when it was first seen.
func (s *Scheduler) note(ctx context.Context, scheds []schedule) error {
	var ids []string
	for _, sc := range scheds {
		if id := sc.tr.ID(sc.wf.Name); !s.noted[id] {
			ids = append(ids, id)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	if err := s.Triggers.Store.NoteTriggers(ctx, ids); err != nil {
		return err
	}
	if s.noted == nil {
		s.noted = map[string]bool{}
	}
	for _, id := range ids {
		s.noted[id] = true
	}
	return nil
}

func (s *Scheduler) warn(ctx context.Context, trigger string, err error) {
	if ctx.Err() == nil {
		s.Log.Warn("orchestrator.trigger_fire_failed", zap.String("trigger", trigger), zap.Error(err))
	}
}

// due is what a schedule owes at now, given the latest time it fired for (or when it was first
// seen): each time within Late of now fires; of the times missed before that, catch_up one fires
// the latest when nothing is on time, and catch_up none records the latest as skipped.
func (s *Scheduler) due(tr *workflow.Trigger, st db.TriggerState, now time.Time) []Delivery {
	base := st.Since
	if st.LastScheduled.After(base) {
		base = st.LastScheduled
	}
	if base.IsZero() {
		return nil
	}
	edge := now.Add(-s.late())
	var out []Delivery
	missed := latestBefore(tr, base, edge)
	for t := tr.Next(maxTime(base, edge)); !t.IsZero() && !t.After(now) && len(out) < maxOnTime; t = tr.Next(t) {
		out = append(out, Delivery{Key: db.ScheduleKey(t), ScheduledAt: t.UTC()})
	}
	switch {
	case missed.IsZero() || len(out) > 0:
	case tr.CatchUp == workflow.CatchUpOne:
		out = append(out, Delivery{Key: db.ScheduleKey(missed), ScheduledAt: missed.UTC()})
	default:
		out = append(out, Delivery{Key: db.ScheduleKey(missed), ScheduledAt: missed.UTC(), Skip: db.ReasonMissed})
	}
	return out
}

// maxOnTime bounds the fires of one schedule in one look.
const maxOnTime = 600

// catchUpWindows are how far back latestBefore looks, widening until it finds a time: a schedule
// that fires every second is found in the first, a yearly one in the last, each in a few steps.
var catchUpWindows = []time.Duration{time.Minute, time.Hour, 24 * time.Hour, 32 * 24 * time.Hour, 367 * 24 * time.Hour, 5 * 367 * 24 * time.Hour}

// latestBefore is the latest scheduled time in (after, until], or zero.
func latestBefore(tr *workflow.Trigger, after, until time.Time) time.Time {
	if !until.After(after) {
		return time.Time{}
	}
	for _, w := range catchUpWindows {
		from := maxTime(after, until.Add(-w))
		var last time.Time
		for t, n := tr.Next(from), 0; !t.IsZero() && !t.After(until) && n < 100000; t, n = tr.Next(t), n+1 {
			last = t
		}
		if !last.IsZero() || from.Equal(after) {
			return last
		}
	}
	return time.Time{}
}

func maxTime(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}
