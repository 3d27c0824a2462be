// Package sim is a randomized model test of db.Store, in the manner of FoundationDB's simulation:
// a seeded driver issues random interleavings of user operations (run, resume, approve, reject,
// cancel), worker operations (claim, heartbeat, node events, pause, complete, fail, release),
// worker crashes between any two writes, lease expiry and rescue against a real store, and after
// every step compares the store with a model of what it must hold and checks the invariants of
// docs/state-machine.md. Everything random comes from the seed, so a failing seed replays.
package sim

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"threadflow/db"
)

// Clock is the injectable clock the store was opened with (db.Options.Now reads it).
type Clock interface {
	Now() time.Time
	Advance(d time.Duration)
}

// Config is one simulation.
type Config struct {
	Seed  uint64
	Steps int
	// Progress, when set, is called after every 100,000 steps (long runs report how far they got).
	Progress func(step int)
}

// Failure is a violated invariant or a store answer the model did not predict.
type Failure struct {
	Seed  uint64
	Step  int
	Msg   string
	Trace []string // the last steps before the failure
}

func (f *Failure) Error() string {
	return fmt.Sprintf("seed %d, step %d: %s\nlast steps:\n  %s", f.Seed, f.Step, f.Msg, strings.Join(f.Trace, "\n  "))
}

const (
	ttl           = time.Minute
	maxRecoveries = 2
	maxOpen       = 6  // runs not yet terminal; create waits below it
	recent        = 10 // user operations pick among the newest runs, terminal ones included
	traceLen      = 30
)

// Sim is one simulation's store, model and random source.
type Sim struct {
	ctx     context.Context
	store   db.Store
	clock   Clock
	rng     *rand.Rand
	runs    []*run // every run, oldest first
	open    []*run // the runs not in a terminal status: the only ones most steps look at
	byID    map[string]*run
	workers []*worker
	tokens  map[string]bool // every lease token ever handed out
	touched []*run          // runs the current step wrote to, checked after it
	trace   []string
	step    int
	owners  int
	stats   Stats
}

// Run simulates cfg.Steps steps against store, then lets every queued run be claimed. It returns a
// *Failure naming the seed and step at the first violation.
func Run(ctx context.Context, store db.Store, clock Clock, cfg Config) (Stats, error) {
	s := &Sim{ctx: ctx, store: store, clock: clock, rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15)),
		byID: map[string]*run{}, tokens: map[string]bool{}, stats: Stats{}}
	fail := func(err error) error {
		return &Failure{Seed: cfg.Seed, Step: s.step, Msg: err.Error(), Trace: s.trace}
	}
	if _, err := store.EnsureConversation(ctx, db.Conversation{ID: conversation, Platform: "console", ChannelID: "sim"}); err != nil {
		return s.stats, fail(err)
	}
	for s.step = 1; s.step <= cfg.Steps; s.step++ {
		if err := s.once(); err != nil {
			return s.stats, fail(err)
		}
		if cfg.Progress != nil && s.step%100_000 == 0 {
			cfg.Progress(s.step)
		}
	}
	if err := s.drain(); err != nil {
		return s.stats, fail(err)
	}
	for _, r := range s.runs {
		s.stats["end "+string(r.status)]++
	}
	return s.stats, nil
}

// Stats counts what a simulation exercised: the steps of each kind and the outcomes worth knowing
// it reached (refused writes, replays, terminal runs).
type Stats map[string]int

func (st Stats) String() string {
	keys := make([]string, 0, len(st))
	for k := range st {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s=%d", k, st[k])
	}
	return strings.Join(parts, " ")
}

// once takes one random step and checks every run it touched.
func (s *Sim) once() error {
	s.touched = s.touched[:0]
	s.clock.Advance(time.Duration(s.rng.IntN(3000)) * time.Millisecond)
	a := pick(s.rng)
	s.stats[a.name]++
	if err := a.fn(s); err != nil {
		return fmt.Errorf("%s: %w", a.name, err)
	}
	for _, r := range s.touched {
		if err := s.check(r); err != nil {
			return fmt.Errorf("after %s: %w", a.name, err)
		}
	}
	s.open = slices.DeleteFunc(s.open, func(r *run) bool { return r.status.Terminal() })
	return s.checkLeases()
}

// note records what the step does, for the trace of a failure.
func (s *Sim) note(format string, args ...any) {
	if len(s.trace) == traceLen {
		s.trace = s.trace[1:]
	}
	s.trace = append(s.trace, fmt.Sprintf("%d: ", s.step)+fmt.Sprintf(format, args...))
}

func (s *Sim) touch(r *run) {
	if !slices.Contains(s.touched, r) {
		s.touched = append(s.touched, r)
	}
}

// drain is the liveness check: with nothing else happening, claiming until the store says nothing
// is queued claims every queued run.
func (s *Sim) drain() error {
	for range len(s.runs) + 1 {
		s.touched = s.touched[:0]
		done, err := s.claimOne()
		if err != nil {
			return fmt.Errorf("drain: %w", err)
		}
		for _, r := range s.touched {
			if err := s.check(r); err != nil {
				return fmt.Errorf("drain: %w", err)
			}
		}
		if done {
			break
		}
	}
	for _, r := range s.runs {
		if r.status == db.StatusQueued {
			return fmt.Errorf("run %s is still queued after every claim was answered", r.id)
		}
	}
	queued, err := s.store.ListRuns(s.ctx, db.RunFilter{Statuses: []db.Status{db.StatusQueued}, Limit: 1000})
	if err != nil || len(queued) > 0 {
		return fmt.Errorf("the store lists %d queued runs (%v) after every claim was answered", len(queued), err)
	}
	return nil
}

// count tallies a write's outcome for Stats.
func (s *Sim) count(ok, replay bool, what string) {
	switch {
	case replay:
		s.stats["replayed "+what]++
	case ok:
		s.stats["wrote "+what]++
	default:
		s.stats["refused "+what]++
	}
}

// want checks that err is what the model predicted: nil when ok, else an error matching target.
func want(err error, ok bool, target error, what string) error {
	switch {
	case !ok && err != nil && errors.Is(err, target):
		return nil
	case ok && err != nil:
		return fmt.Errorf("%s: the model allows it, the store refused: %w", what, err)
	case !ok && err == nil:
		return fmt.Errorf("%s: the model refuses it (want %v), the store allowed it", what, target)
	case !ok && !errors.Is(err, target):
		return fmt.Errorf("%s: got %v, want an error matching %v", what, err, target)
	}
	return nil
}
