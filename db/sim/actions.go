package sim

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"threadflow/db"
)

const conversation = "console:sim"

// action is one kind of step and how often the driver takes it.
type action struct {
	name   string
	weight int
	fn     func(*Sim) error
}

var actions = []action{
	{"run", 8, (*Sim).create},
	{"claim", 10, func(s *Sim) error { _, err := s.claimOne(); return err }},
	{"claim race", 3, (*Sim).claimRace},
	{"worker write", 35, func(s *Sim) error { return s.act(false) }},
	{"zombie write", 4, func(s *Sim) error { return s.act(true) }},
	{"heartbeat", 6, (*Sim).heartbeat},
	{"crash", 3, (*Sim).crash},
	{"lease expiry", 3, func(s *Sim) error { s.clock.Advance(ttl/2 + time.Duration(s.rng.IntN(int(ttl)))); return nil }},
	{"rescue", 6, (*Sim).rescue},
	{"gate timers", 3, (*Sim).fireTimers},
	{"release", 2, (*Sim).release},
	{"resume", 4, func(s *Sim) error { return s.user(db.OpResume, 1) }},
	{"approve", 5, func(s *Sim) error { return s.user(db.OpApprove, 1) }},
	{"reject", 2, func(s *Sim) error { return s.user(db.OpReject, 1) }},
	{"cancel", 2, func(s *Sim) error { return s.user(db.OpCancel, 1) }},
	{"race", 4, func(s *Sim) error {
		ops := []db.Op{db.OpResume, db.OpApprove, db.OpReject, db.OpCancel}
		return s.user(ops[s.rng.IntN(len(ops))], 2+s.rng.IntN(2))
	}},
}

func pick(rng *rand.Rand) action {
	total := 0
	for _, a := range actions {
		total += a.weight
	}
	n := rng.IntN(total)
	for _, a := range actions {
		if n < a.weight {
			return a
		}
		n -= a.weight
	}
	panic("unreachable")
}

// create is "run": a new queued run, while fewer than maxOpen runs are unfinished.
func (s *Sim) create() error {
	if len(s.open) >= maxOpen {
		return nil
	}
	r := newRun(fmt.Sprintf("r%07d", len(s.runs)+1))
	s.note("run %s", r.id)
	_, err := s.store.CreateRun(s.ctx, db.NewRun{ID: r.id, Workflow: "sim", ConversationID: conversation,
		ParentConversationID: conversation, UserID: "console:u", WorkflowSource: []byte(workflowSource)})
	if err != nil {
		return err
	}
	s.runs = append(s.runs, r)
	s.open = append(s.open, r)
	s.byID[r.id] = r
	s.touch(r)
	return nil
}

func (s *Sim) queued() int {
	n := 0
	for _, r := range s.open {
		if r.status == db.StatusQueued {
			n++
		}
	}
	return n
}

func (s *Sim) owner() string { s.owners++; return fmt.Sprintf("w%d", s.owners) }

// claimOne claims once, a single run or (one time in three) a batch of up to 3 as a replica with
// free slots does; done is true when the store rightly said nothing is queued.
func (s *Sim) claimOne() (done bool, err error) {
	owner := s.owner()
	if n := 1 + s.rng.IntN(3); n > 1 && s.rng.IntN(3) == 0 {
		return s.claimBatch(owner, n)
	}
	s.note("claim by %s (%d queued)", owner, s.queued())
	got, err := s.store.ClaimRun(s.ctx, owner, ttl, db.Reach{})
	if err := s.claimed(got, err); err != nil {
		return false, err
	}
	return errors.Is(err, db.ErrNoQueuedRun), nil
}

// claimBatch claims up to n runs in one ClaimRuns: it must take min(n, queued) of them, oldest first.
func (s *Sim) claimBatch(owner string, n int) (done bool, err error) {
	queued := s.queued()
	s.note("claim of %d by %s (%d queued)", n, owner, queued)
	got, err := s.store.ClaimRuns(s.ctx, owner, ttl, db.Reach{}, n)
	if errors.Is(err, db.ErrNoQueuedRun) {
		return true, s.claimed(db.Run{}, err)
	}
	if err != nil {
		return false, err
	}
	if len(got) != min(n, queued) {
		return false, fmt.Errorf("a claim of %d runs took %d; %d were queued", n, len(got), queued)
	}
	for _, r := range got {
		if err := s.claimed(r, nil); err != nil {
			return false, err
		}
	}
	return false, nil
}

// claimed checks one claim's answer against the model and applies it.
func (s *Sim) claimed(got db.Run, err error) error {
	if errors.Is(err, db.ErrNoQueuedRun) {
		if n := s.queued(); n > 0 {
			return fmt.Errorf("claim found nothing queued; the model has %d queued runs", n)
		}
		return nil
	}
	if err != nil {
		return err
	}
	r := s.byID[got.ID]
	switch {
	case r == nil || r.status != db.StatusQueued:
		return fmt.Errorf("claim took run %s, which the model has %v, not queued: a run leased twice", got.ID, statusOf(r))
	case got.LeaseToken == "" || s.tokens[got.LeaseToken]:
		return fmt.Errorf("claim of %s handed out lease token %q, which is empty or was handed out before", got.ID, got.LeaseToken)
	}
	s.tokens[got.LeaseToken] = true
	r.token, r.expires = got.LeaseToken, s.clock.Now().Add(ttl)
	r.move(db.StatusRunning, db.EventRunClaimed)
	s.workers = append(s.workers, &worker{lease: got.Lease()})
	s.touch(r)
	return nil
}

func statusOf(r *run) string {
	if r == nil {
		return "never created"
	}
	return string(r.status)
}

// claimRace has several workers claim at once: each queued run goes to one of them at most.
func (s *Sim) claimRace() error {
	n := 2 + s.rng.IntN(2)
	s.note("claim race of %d (%d queued)", n, s.queued())
	runs, errs := make([]db.Run, n), make([]error, n)
	owners := make([]string, n)
	for i := range owners {
		owners[i] = s.owner()
	}
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { runs[i], errs[i] = s.store.ClaimRun(s.ctx, owners[i], ttl, db.Reach{}) })
	}
	wg.Wait()
	// Apply winners in run order, so what the model holds does not depend on scheduling.
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return strings.Compare(runs[a].ID, runs[b].ID) })
	wins, want := 0, min(n, s.queued())
	for _, i := range idx {
		if errs[i] == nil {
			wins++
			if err := s.claimed(runs[i], nil); err != nil {
				return err
			}
		} else if !errors.Is(errs[i], db.ErrNoQueuedRun) {
			return errs[i]
		}
	}
	if wins != want {
		return fmt.Errorf("%d of %d racing claims won; %d runs were queued, so %d should have", wins, n, wins+s.queued(), want)
	}
	s.sortWorkers()
	return nil
}

func (s *Sim) sortWorkers() {
	slices.SortStableFunc(s.workers, func(a, b *worker) int { return strings.Compare(a.lease.RunID, b.lease.RunID) })
}

// pickWorker returns a random worker that is crashed (or not), or nil.
func (s *Sim) pickWorker(crashed bool) *worker {
	var ws []*worker
	for _, w := range s.workers {
		if w.crashed == crashed {
			ws = append(ws, w)
		}
	}
	if len(ws) == 0 {
		return nil
	}
	return ws[s.rng.IntN(len(ws))]
}

func (s *Sim) drop(w *worker) {
	s.workers = slices.DeleteFunc(s.workers, func(x *worker) bool { return x == w })
}

func (s *Sim) heartbeat() error {
	w := s.pickWorker(false)
	if w == nil {
		return nil
	}
	r := s.byID[w.lease.RunID]
	s.note("heartbeat %s by %s", r.id, w.lease.Owner)
	err := s.store.Heartbeat(s.ctx, w.lease, ttl)
	ok, _ := r.leaseWrite(w.lease, "")
	s.count(ok, false, "heartbeat")
	if err := want(err, ok, db.ErrLeaseLost, "heartbeat "+r.id); err != nil {
		return err
	}
	if ok {
		r.expires = s.clock.Now().Add(ttl)
	} else {
		s.drop(w)
	}
	s.touch(r)
	return nil
}

// crash stops a worker between two writes. It remembers the write it was about to make: if it comes
// back (a zombie: a long GC pause, a partition), it makes that write on its old view of the run.
func (s *Sim) crash() error {
	w := s.pickWorker(false)
	if w == nil {
		return nil
	}
	wr, err := s.plan(w)
	if err != nil {
		return err
	}
	s.note("crash of %s on %s before %s", w.lease.Owner, w.lease.RunID, wr)
	w.crashed, w.pending = true, &wr
	return nil
}

func (s *Sim) release() error {
	w := s.pickWorker(false)
	if w == nil {
		return nil
	}
	return s.perform(w, write{kind: wRelease})
}

// rescue re-queues (or fails) every running run whose lease expired, as the model predicts.
func (s *Sim) rescue() error {
	now := s.clock.Now()
	var expect []string
	for _, r := range s.open {
		if r.status == db.StatusRunning && r.expires.Before(now) {
			expect = append(expect, r.id)
		}
	}
	s.note("rescue (expect %v)", expect)
	got, err := s.store.RescueExpired(s.ctx, maxRecoveries)
	if err != nil {
		return err
	}
	ids := make([]string, len(got))
	for i, x := range got {
		ids[i] = x.Run.ID
	}
	slices.Sort(ids)
	if !slices.Equal(ids, expect) {
		return fmt.Errorf("rescued %v; the expired leases are %v", ids, expect)
	}
	for _, id := range expect {
		r := s.byID[id]
		s.stats["rescued"]++
		r.recoveries++
		r.token = ""
		if r.recoveries > maxRecoveries {
			r.move(db.StatusFailed, db.EventRunFailed)
		} else {
			r.move(db.StatusQueued, db.EventRunRescued)
		}
		s.touch(r)
	}
	return nil
}

// fireTimers fires the gate timeouts that are due: each rejects its gate or abandons its run, once.
func (s *Sim) fireTimers() error {
	now := s.clock.Now()
	var expect []string
	for _, r := range s.open {
		if r.status == db.StatusPaused && r.pauseKind == db.PauseApproval && !r.gateDue.IsZero() && !now.Before(r.gateDue) {
			expect = append(expect, r.id)
		}
	}
	s.note("gate timers (expect %v)", expect)
	fired, err := s.store.FireGateTimers(s.ctx, db.Reach{}, nil)
	if err != nil {
		return err
	}
	ids := make([]string, len(fired))
	for i, f := range fired {
		ids[i] = f.Run.ID
		if f.Kind != db.TimerTimeout || f.Run.Status != db.StatusCancelled {
			return fmt.Errorf("timer of run %s fired as %s leaving it %s; want a timeout leaving it cancelled", f.Run.ID, f.Kind, f.Run.Status)
		}
	}
	slices.Sort(ids)
	if !slices.Equal(ids, expect) {
		return fmt.Errorf("gate timers fired for %v; the due ones are %v", ids, expect)
	}
	for _, id := range expect {
		r := s.byID[id]
		s.stats["timed out "+r.onTimeout]++
		r.token = ""
		if r.onTimeout == db.TimeoutAbandon {
			r.move(db.StatusCancelled, db.EventRunCancelled)
		} else {
			r.rejected = true
			r.move(db.StatusCancelled, db.EventGateResolved, db.EventRunCancelled)
		}
		s.touch(r)
	}
	return nil
}

// user is a person's operation on one of the newest runs, made by n people at once: at most one of
// them wins, and only when the model allows the op.
func (s *Sim) user(op db.Op, n int) error {
	if len(s.runs) == 0 {
		return nil
	}
	r := s.target(op)
	ok := r.allows(op)
	s.note("%s %s by %d (run is %s %s; model allows: %v)", op, r.id, n, r.status, r.pauseKind, ok)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { errs[i] = s.userOp(op, r.id, fmt.Sprintf("console:u%d", i)) })
	}
	wg.Wait()
	wins := 0
	for _, err := range errs {
		if err == nil {
			wins++
		} else if !errors.Is(err, db.ErrInvalidTransition) {
			return fmt.Errorf("%s %s: %w", op, r.id, err)
		}
	}
	if err := want(errors.Join(errs...), ok && wins > 0, db.ErrInvalidTransition, string(op)+" "+r.id); n == 1 && err != nil {
		return err
	}
	if (ok && wins != 1) || (!ok && wins != 0) {
		return fmt.Errorf("%s %s by %d people at once: %d won; the model allows it: %v, so want exactly one winner or none", op, r.id, n, wins, ok)
	}
	s.count(wins > 0, false, string(op))
	if ok {
		r.apply(op)
	}
	s.touch(r)
	return nil
}

// target picks the run a person acts on: half the time one the op may leave (when there is one),
// else any of the newest runs, terminal ones included, so illegal ops are tried as often.
func (s *Sim) target(op db.Op) *run {
	var legal []*run
	for _, r := range s.open {
		if r.allows(op) {
			legal = append(legal, r)
		}
	}
	if len(legal) > 0 && s.rng.IntN(2) == 0 {
		return legal[s.rng.IntN(len(legal))]
	}
	from := max(0, len(s.runs)-recent)
	return s.runs[from+s.rng.IntN(len(s.runs)-from)]
}

func (s *Sim) userOp(op db.Op, runID, by string) error {
	var err error
	switch op {
	case db.OpResume:
		_, err = s.store.ResumeRun(s.ctx, runID, db.Actor{ID: by})
	case db.OpCancel:
		_, err = s.store.CancelRun(s.ctx, runID, db.Actor{ID: by}, "sim")
	case db.OpApprove, db.OpReject:
		d := db.DecisionApprove
		if op == db.OpReject {
			d = db.DecisionReject
		}
		var res db.GateResult
		res, err = s.store.ResolveGate(s.ctx, db.GateResolution{RunID: runID, Decision: d, By: by})
		if err == nil && !res.Resolved {
			err = fmt.Errorf("%s of %s by %s was counted but did not resolve a gate needing one approval", op, runID, by)
		}
	}
	return err
}
