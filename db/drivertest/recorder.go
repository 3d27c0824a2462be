package drivertest

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"threadflow/db"
)

// recorder is a db.Driver that hands every compare-and-set of the core to the engine's driver and
// checks what the engine did against the model: whether it matched (matches), and the run it left
// (apply). It notes which guard and SET fields the core used, so the suite can say when an op that
// uses one is missing from it.
type recorder struct {
	db.Driver
	t *testing.T

	mu      sync.Mutex
	used    map[string]bool // "From", "Set.Pause", ...
	checked int
	missed  int // compare-and-sets that matched nothing, as the model also said
}

func newRecorder(t *testing.T, d db.Driver) *recorder {
	return &recorder{Driver: d, t: t, used: map[string]bool{}}
}

func (r *recorder) InTx(ctx context.Context, fn func(tx db.DriverTx) error) error {
	return r.Driver.InTx(ctx, func(tx db.DriverTx) error { return fn(recordedTx{tx, r}) })
}

func (r *recorder) InControlTx(ctx context.Context, fn func(tx db.DriverTx) error) error {
	return r.Driver.InControlTx(ctx, func(tx db.DriverTx) error { return fn(recordedTx{tx, r}) })
}

// recordedTx reads each run a compare-and-set names before handing it on, in the same
// transaction, which holds the row.
type recordedTx struct {
	db.DriverTx
	r *recorder
}

func (x recordedTx) UpdateRun(ctx context.Context, u db.RunUpdate) (db.Run, bool, error) {
	before, found, err := x.lock(ctx, u.RunID)
	if err != nil {
		return db.Run{}, false, err
	}
	got, ok, err := x.DriverTx.UpdateRun(ctx, u)
	if err == nil {
		x.r.check(u, before, found, got, ok)
	}
	return got, ok, err
}

func (x recordedTx) TransitAll(ctx context.Context, ts []db.Transit) ([]db.Run, []bool, error) {
	befores, found := make([]db.Run, len(ts)), make([]bool, len(ts))
	for i, t := range ts {
		var err error
		if befores[i], found[i], err = x.lock(ctx, t.Update.RunID); err != nil {
			return nil, nil, err
		}
	}
	runs, ok, err := x.DriverTx.TransitAll(ctx, ts)
	if err == nil {
		for i, t := range ts {
			x.r.check(t.Update, befores[i], found[i], runs[i], ok[i])
		}
	}
	return runs, ok, err
}

func (x recordedTx) lock(ctx context.Context, id string) (db.Run, bool, error) {
	r, err := x.LockRun(ctx, id)
	if errors.Is(err, db.ErrNotFound) {
		return db.Run{}, false, nil
	}
	return r, err == nil, err
}

// check compares one compare-and-set with the model.
func (r *recorder) check(u db.RunUpdate, before db.Run, found bool, got db.Run, ok bool) {
	r.t.Helper()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.checked++
	r.note(u)
	if want := matches(before, found, u); ok != want {
		r.t.Errorf("compare-and-set %+v on run %+v: engine matched %v, the model says %v", u, before, ok, want)
		return
	}
	if !ok {
		r.missed++
		return
	}
	if d := diff(apply(before, u.Set), got); len(d) > 0 {
		r.t.Errorf("compare-and-set %+v left the run differing from the model:\n  %s", u, strings.Join(d, "\n  "))
	}
}

// note records the guard and SET fields u uses.
func (r *recorder) note(u db.RunUpdate) {
	fields := func(prefix string, v reflect.Value, skip ...string) {
		for i := range v.NumField() {
			name := v.Type().Field(i).Name
			if !v.Field(i).IsZero() && !slices.Contains(skip, name) {
				r.used[prefix+name] = true
			}
		}
	}
	fields("", reflect.ValueOf(u), "RunID", "Token", "Recoveries", "Set")
	fields("Set.", reflect.ValueOf(u.Set))
}

// unused lists the guard and SET fields of db.RunUpdate that no checked compare-and-set used.
func (r *recorder) unused() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	all := func(prefix string, t reflect.Type, skip ...string) {
		for i := range t.NumField() {
			if name := t.Field(i).Name; !slices.Contains(skip, name) && !r.used[prefix+name] {
				out = append(out, prefix+name)
			}
		}
	}
	all("", reflect.TypeFor[db.RunUpdate](), "RunID", "Token", "Recoveries", "Set")
	all("Set.", reflect.TypeFor[db.RunSet]())
	sort.Strings(out)
	return out
}
