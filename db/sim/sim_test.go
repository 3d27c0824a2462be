package sim_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap"

	"threadflow/db"
	"threadflow/db/dbtest"
	"threadflow/db/postgres"
	"threadflow/db/sim"
	"threadflow/db/sqlite"
	"threadflow/db/storetest"
)

// start is microsecond-aligned, as the engines store times.
var start = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// steps is SIM_STEPS, or the short budget CI runs.
func steps(t *testing.T) int {
	if v := os.Getenv("SIM_STEPS"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 {
			t.Fatalf("SIM_STEPS=%q: want a positive number of steps", v)
		}
		return n
	}
	return 1000
}

// seed is SIM_SEED (to replay a failure), or a new one each run so CI explores.
func seed(t *testing.T) uint64 {
	if v := os.Getenv("SIM_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("SIM_SEED=%q: want the unsigned number a failure printed", v)
		}
		return n
	}
	return uint64(time.Now().UnixNano())
}

// engines opens each engine quietly: a million steps must not log a million lines.
var engines = []struct {
	name string
	open func(t *testing.T, opts db.Options) (db.Store, error)
}{
	{"sqlite", func(t *testing.T, opts db.Options) (db.Store, error) {
		return sqlite.Open(t.Context(), filepath.Join(t.TempDir(), "sim.db"), opts, zap.NewNop())
	}},
	{"postgres", func(t *testing.T, opts db.Options) (db.Store, error) {
		return postgres.Open(t.Context(), dbtest.PostgresDatabase(t), opts, zap.NewNop())
	}},
}

// simulate runs one simulation on a fresh store of each engine.
func simulate(t *testing.T, f func(t *testing.T, run func(cfg sim.Config) (sim.Stats, error))) {
	for _, e := range engines {
		t.Run(e.name, func(t *testing.T) {
			clock := storetest.NewClock(start)
			s, err := e.open(t, db.Options{Now: clock.Now})
			if err != nil {
				t.Fatalf("open %s: %v", e.name, err)
			}
			t.Cleanup(func() { _ = s.Close() })
			f(t, func(cfg sim.Config) (sim.Stats, error) { return sim.Run(t.Context(), s, clock, cfg) })
		})
	}
}

// TestSim runs the simulation against the real store on both engines.
func TestSim(t *testing.T) {
	n, sd := steps(t), seed(t)
	simulate(t, func(t *testing.T, run func(sim.Config) (sim.Stats, error)) {
		began := time.Now()
		progress := func(step int) { t.Logf("%d steps after %s", step, time.Since(began).Round(time.Millisecond)) }
		stats, err := run(sim.Config{Seed: sd, Steps: n, Progress: progress})
		if err != nil {
			t.Fatalf("%v\nreplay: SIM_SEED=%d SIM_STEPS=%d go test -run '%s' ./db/sim", err, sd, n, t.Name())
		}
		t.Logf("seed %d: %d steps in %s; %s", sd, n, time.Since(began).Round(time.Millisecond), stats)
	})
}

// TestSimCatchesBrokenGuard flips one guard of the state machine, letting cancel leave completed,
// and requires the simulation to catch it within the CI budget on every engine: a simulation that
// passes whatever the guards say would prove nothing.
func TestSimCatchesBrokenGuard(t *testing.T) {
	saved := db.Transitions[db.OpCancel]
	broken := saved
	broken.From = append(slices.Clone(saved.From), db.StatusCompleted)
	db.Transitions[db.OpCancel] = broken
	t.Cleanup(func() { db.Transitions[db.OpCancel] = saved })

	simulate(t, func(t *testing.T, run func(sim.Config) (sim.Stats, error)) {
		_, err := run(sim.Config{Seed: 15, Steps: steps(t)})
		var f *sim.Failure
		if !errors.As(err, &f) {
			t.Fatalf("with cancel allowed to leave completed, the simulation reported %v; want a failure", err)
		}
		if !strings.Contains(f.Msg, "cancel r") { // a cancel the model refused succeeded
			t.Fatalf("the simulation failed for another reason than the broken guard:\n%v", f)
		}
		t.Logf("caught at step %d: %s", f.Step, f.Msg)
	})
}
