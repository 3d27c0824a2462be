package db

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"threadflow/groupcommit"
)

// Machine is the transition core: it implements the state-machine methods of Store once, for every
// engine. It decides each compare-and-set from Transitions (which statuses, which lease, what it
// writes), the events it appends and what a lost race returns; the engine's Driver only runs the SQL.
// Engines embed a *Machine in their Store.
type Machine struct {
	Driver Driver
	// Dialect is the engine's, for the statements the core renders itself (Prune).
	Dialect Dialect
	// Now is the engine's clock, in UTC at the precision the engine stores.
	Now func() time.Time
	// Moved, when set, is told about every transition that committed (engines log it).
	Moved func(op Op, r Run)

	createsOnce sync.Once
	creates     *groupcommit.Batcher[NewRun, createdRun] // CreateRun's group commit
	notes       atomic.Pointer[GroupNotes]               // SetGroupNotes
	childNotes  atomic.Pointer[ChildNotes]               // SetChildNotes
}

// opHeartbeat names heartbeat writes in errors; a heartbeat is not a state transition.
const opHeartbeat Op = "heartbeat"

// update is the compare-and-set of op on runID as Transitions has it: leaving op's From statuses,
// under the caller's lease when op carries one, to op's To status.
func update(op Op, runID, token string) RunUpdate {
	tr := Transitions[op]
	return RunUpdate{RunID: runID, From: tr.From, Leased: tr.Lease, Token: token, Set: RunSet{Status: tr.To}}
}

// transit runs u as op in tx, appends the events events derives from the updated run and records
// the messages the transition owes (the outbox), all or nothing.
func (m *Machine) transit(ctx context.Context, tx DriverTx, op Op, u RunUpdate, events func(Run) []Event, owe []Owing) (Run, error) {
	r, ok, err := tx.UpdateRun(ctx, u)
	if err != nil {
		return Run{}, fmt.Errorf("%s run %s: %w", op, u.RunID, err)
	}
	if !ok {
		r, _, err := ExplainMiss(ctx, tx, op, u.RunID, u.Token, Transitions[op].Lease)
		return r, err
	}
	evs := events(r)
	for _, e := range evs {
		if _, err := tx.AppendEvent(ctx, e); err != nil {
			return Run{}, err
		}
	}
	if err := m.ended(ctx, tx, r, evs, m.Now()); err != nil {
		return Run{}, err
	}
	for _, o := range owe {
		if o == nil {
			continue
		}
		if err := oweChecked(ctx, tx, r.ID, o(r), m.Now()); err != nil {
			return Run{}, err
		}
	}
	return r, nil
}

// owes records what a run owes in tx.
func owes(ctx context.Context, tx DriverTx, runID string, owe []Owed, now time.Time) error {
	if len(owe) == 0 {
		return nil
	}
	if err := tx.Owe(ctx, runID, owe, now); err != nil {
		return fmt.Errorf("record the messages run %s owes: %w", runID, err)
	}
	return nil
}

// transitAll is transit for each of ts, whose events do not depend on the updated runs, sent to the
// engine at once (DriverTx.TransitAll): a claim of up to MaxClaimBatch runs or the rescue of a thousand is a
// round trip on PostgreSQL, not two per run.
func (m *Machine) transitAll(ctx context.Context, tx DriverTx, op Op, ts []Transit) ([]Run, error) {
	runs, ok, err := tx.TransitAll(ctx, ts)
	if err != nil {
		return nil, fmt.Errorf("%s %d runs: %w", op, len(ts), err)
	}
	for i, t := range ts {
		if ok[i] {
			continue
		}
		r, replay, err := ExplainMiss(ctx, tx, op, t.Update.RunID, t.Update.Token, Transitions[op].Lease)
		if !replay {
			return nil, err
		}
		runs[i] = r
	}
	for _, r := range runs { // a run that ended gives up its concurrency group
		if err := m.ended(ctx, tx, r, nil, m.Now()); err != nil {
			return nil, err
		}
	}
	return runs, nil
}

// ExplainMiss explains a compare-and-set that matched nothing, reading the run in the same transaction.
// A lease write whose run already is where the write leads, under the same token, is the worker
// retrying a write that committed (its reply was lost): that is a replay, returned with no error.
// Anything else is a *TransitionError carrying the status found.
func ExplainMiss(ctx context.Context, tx DriverTx, op Op, runID, token string, lease bool) (Run, bool, error) {
	r, err := tx.LockRun(ctx, runID)
	if errors.Is(err, ErrNotFound) {
		return Run{}, false, &TransitionError{RunID: runID, Op: op, Lease: lease}
	}
	if err != nil {
		return Run{}, false, fmt.Errorf("%s run %s: %w", op, runID, err)
	}
	if to := Transitions[op].To; lease && to != "" && r.Status == to && token != "" && r.LeaseToken == token {
		return r, true, nil
	}
	return Run{}, false, &TransitionError{RunID: runID, Op: op, Found: r.Status, Lease: lease}
}

// move runs one transition in its own transaction, with the messages it owes.
func (m *Machine) move(ctx context.Context, op Op, u RunUpdate, events func(Run) []Event, owe []Owing) (Run, error) {
	var out Run
	err := m.Driver.InTx(ctx, func(tx DriverTx) error {
		var err error
		out, err = m.transit(ctx, tx, op, u, events, owe)
		return err
	})
	if err == nil && m.Moved != nil {
		m.Moved(op, out)
	}
	return out, err
}

// one is the events func of a transition that appends a single event.
func one(node string, at time.Time, p Payload) func(Run) []Event {
	return func(r Run) []Event { return []Event{NewEvent(r.ID, node, 0, p, at)} }
}

// ClaimRun moves the oldest queued run in reach to running under a fresh lease for owner.
func (m *Machine) ClaimRun(ctx context.Context, owner string, ttl time.Duration, reach Reach) (Run, error) {
	runs, err := m.ClaimRuns(ctx, owner, ttl, reach, 1)
	if err != nil {
		return Run{}, err
	}
	return runs[0], nil
}

// ClaimRuns moves up to n of the oldest queued runs in reach to running, each under a fresh lease
// for owner, in one transaction: a replica with many free slots (a restart taking over a thousand
// runs) pays one commit for a batch instead of one per run. Each run gets its own token and its own
// run_claimed event, exactly as ClaimRun gives them.
func (m *Machine) ClaimRuns(ctx context.Context, owner string, ttl time.Duration, reach Reach, n int) ([]Run, error) {
	if owner == "" || ttl <= 0 || n <= 0 || n > MaxClaimBatch {
		return nil, fmt.Errorf("claim runs: need a worker name, a positive lease duration and 1-%d runs (got %q, %s, %d)", MaxClaimBatch, owner, ttl, n)
	}
	now := m.Now()
	var out []Run
	err := m.Driver.InControlTx(ctx, func(tx DriverTx) error {
		out = out[:0] // InTx may run fn again after a serialization failure
		ids, err := tx.NextQueued(ctx, reach, now, n)
		if err != nil {
			return fmt.Errorf("claim run: %w", err)
		}
		if len(ids) == 0 {
			return ErrNoQueuedRun
		}
		ts := make([]Transit, len(ids))
		for i, id := range ids {
			u := update(OpClaim, id, "")
			u.Set.Lease = &Lease{Owner: owner, Token: NewToken()}
			u.Set.ExpiresAt, u.Set.HeartbeatAt, u.Set.StartedAt = now.Add(ttl), now, now
			ts[i] = Transit{Update: u, Events: one("", now, RunClaimedData{Owner: owner})(Run{ID: id})}
		}
		out, err = m.transitAll(ctx, tx, OpClaim, ts)
		return err
	})
	if err != nil {
		return nil, err
	}
	if m.Moved != nil {
		for _, r := range out {
			m.Moved(OpClaim, r)
		}
	}
	return out, nil
}

// Heartbeat extends a held lease by ttl from now.
func (m *Machine) Heartbeat(ctx context.Context, l Lease, ttl time.Duration) error {
	if ttl <= 0 {
		return fmt.Errorf("heartbeat run %s: lease duration must be positive, got %s", l.RunID, ttl)
	}
	now := m.Now()
	u := RunUpdate{RunID: l.RunID, From: []Status{StatusRunning}, Leased: true, Token: l.Token,
		Set: RunSet{ExpiresAt: now.Add(ttl), HeartbeatAt: now}}
	return m.Driver.InTx(ctx, func(tx DriverTx) error {
		_, ok, err := tx.UpdateRun(ctx, u)
		if err != nil || ok {
			return err
		}
		_, _, err = ExplainMiss(ctx, tx, opHeartbeat, l.RunID, l.Token, true)
		return err
	})
}

// RenewLeases extends every lease in ls by ttl from now in one transaction: one commit per tick for
// all the runs a replica holds, where Heartbeat costs one each. lost are the leases it could not
// extend (the run left running, or another lease replaced it); they were not written.
func (m *Machine) RenewLeases(ctx context.Context, ls []Lease, ttl time.Duration) (lost []Lease, err error) {
	if ttl <= 0 || len(ls) > MaxRenewBatch {
		return nil, fmt.Errorf("renew leases: need a positive lease duration and at most %d leases (got %s, %d)", MaxRenewBatch, ttl, len(ls))
	}
	if len(ls) == 0 {
		return nil, nil
	}
	now := m.Now()
	lost, err = m.Driver.RenewLeases(ctx, ls, now.Add(ttl), now)
	if err != nil {
		return nil, fmt.Errorf("renew %d leases: %w", len(ls), err)
	}
	return lost, nil
}

// RenewEach is RenewLeases as one compare-and-set per lease in tx, for an engine where a statement
// costs no round trip.
func RenewEach(ctx context.Context, tx DriverTx, ls []Lease, expires, now time.Time) ([]Lease, error) {
	var lost []Lease
	for _, l := range ls {
		u := RunUpdate{RunID: l.RunID, From: []Status{StatusRunning}, Leased: true, Token: l.Token,
			Set: RunSet{ExpiresAt: expires, HeartbeatAt: now}}
		_, ok, err := tx.UpdateRun(ctx, u)
		if err != nil {
			return nil, err
		}
		if !ok {
			lost = append(lost, l)
		}
	}
	return lost, nil
}

// opWorkspace names workspace writes in errors; recording a workspace is not a state transition.
const opWorkspace Op = "record workspace of"

// SetWorkspace records where a running run's workspace lives, under its lease, with its
// workspace_created event.
func (m *Machine) SetWorkspace(ctx context.Context, l Lease, w Workspace) (Run, error) {
	if w.Path == "" {
		return Run{}, fmt.Errorf("record workspace of run %s: need its path", l.RunID)
	}
	now := m.Now()
	u := RunUpdate{RunID: l.RunID, From: []Status{StatusRunning}, Leased: true, Token: l.Token, Set: RunSet{Workspace: &w}}
	var out Run
	err := m.Driver.InTx(ctx, func(tx DriverTx) error {
		r, ok, err := tx.UpdateRun(ctx, u)
		if err != nil {
			return fmt.Errorf("record workspace of run %s: %w", l.RunID, err)
		}
		if !ok {
			_, _, err = ExplainMiss(ctx, tx, opWorkspace, l.RunID, l.Token, true)
			return err
		}
		out = r
		_, err = tx.AppendEvent(ctx, NewEvent(l.RunID, "", 0, w, now))
		return err
	})
	return out, err
}

// PauseRun moves running -> paused. A gate pause appends gate_requested carrying the pause, so the
// gate's history says what was asked; a recovery pause appends run_paused and keeps the error and
// the hint the user sees in meta.
func (m *Machine) PauseRun(ctx context.Context, l Lease, p Pause, owe ...Owing) (Run, error) {
	if err := validPause(p); err != nil {
		return Run{}, fmt.Errorf("pause run %s: %w", l.RunID, err)
	}
	u := update(OpPause, l.RunID, l.Token)
	u.Set.Pause, u.Set.EndLease, u.Set.Meta.Pause = &p, true, &p
	if p.Kind == PauseRecovery {
		u.Set.Meta.ResumeHint = p.ResumeHint
		u.Set.Meta.LastError = &RunError{Node: p.Node, Class: ClassInfra, Message: p.Error}
	}
	return m.move(ctx, OpPause, u, one(p.Node, m.Now(), p), owe)
}

// validPause rejects pauses the run could never leave.
func validPause(p Pause) error {
	switch {
	case p.Kind.IsGate() && p.Node == "":
		return errors.New("a gate pause needs the gate's node id")
	case p.Kind.IsGate(), p.Kind == PauseRecovery:
		return nil
	}
	return fmt.Errorf("unknown pause kind %q (want approval, loop or recovery)", p.Kind)
}

// CompleteRun moves running -> completed with the final output. The lease token stays so a replay
// is recognised.
func (m *Machine) CompleteRun(ctx context.Context, l Lease, output string, owe ...Owing) (Run, error) {
	now := m.Now()
	u := update(OpComplete, l.RunID, l.Token)
	u.Set.EndLease, u.Set.FinishedAt, u.Set.Meta.Output = true, now, output
	return m.move(ctx, OpComplete, u, one("", now, RunCompletedData{}), owe)
}

// FailRun moves running -> failed with the reason, kept in meta.last_error. The lease token stays
// so a replay is recognised.
func (m *Machine) FailRun(ctx context.Context, l Lease, e RunError, owe ...Owing) (Run, error) {
	now := m.Now()
	u := update(OpFail, l.RunID, l.Token)
	u.Set.EndLease, u.Set.FinishedAt, u.Set.Meta.LastError = true, now, &e
	return m.move(ctx, OpFail, u, one(e.Node, now, e), owe)
}

// ReleaseRun hands a running run back to the queue. It keeps its queued_at, so it is claimed again
// before runs queued after it.
func (m *Machine) ReleaseRun(ctx context.Context, l Lease) (Run, error) {
	u := update(OpRelease, l.RunID, l.Token)
	u.Set.DropLease = true
	return m.move(ctx, OpRelease, u, one("", m.Now(), RunReleasedData{Owner: l.Owner}), nil)
}

// ResumeRun moves failed or recovery-paused -> queued. A gate pause is answered with ResolveGate,
// never resumed. Leaving paused clears the pause.
func (m *Machine) ResumeRun(ctx context.Context, runID string, by Actor, owe ...Owing) (Run, error) {
	return m.resume(ctx, runID, by, false, owe)
}

// ResumeFresh is ResumeRun that also forgets the run's workspace (see Store.ResumeFresh).
func (m *Machine) ResumeFresh(ctx context.Context, runID string, by Actor, owe ...Owing) (Run, error) {
	return m.resume(ctx, runID, by, true, owe)
}

func (m *Machine) resume(ctx context.Context, runID string, by Actor, fresh bool, owe []Owing) (Run, error) {
	now := m.Now()
	u := update(OpResume, runID, "")
	u.IfPaused = []PauseKind{PauseRecovery}
	u.Set.NextAttempt, u.Set.LeavePause, u.Set.QueuedAt, u.Set.Reopen, u.Set.ResumedFrom = true, true, now, true, true
	u.Set.ForgetWorkspace = fresh
	r, err := m.move(ctx, OpResume, u, func(r Run) []Event {
		data := ResumeRequestedData{By: by.ID, From: r.Meta.ResumedFrom, FreshWorkspace: fresh, Via: by.Via}
		return []Event{NewEvent(r.ID, "", 0, data, now)}
	}, owe)
	var te *TransitionError
	if errors.As(err, &te) && te.Found == StatusPaused {
		return r, fmt.Errorf("run %s waits at a gate; approve or reject it instead of resuming: %w", runID, err)
	}
	return r, err
}

// leave is the compare-and-set of op (cancel, reject or approve) that takes a run out of where it
// is for good or back to the queue: leaving clears the pause and its gate timers, and every op but
// approve drops the lease, which is how a running worker learns it must stop.
func leave(op Op, runID string, now time.Time) RunUpdate {
	u := update(op, runID, "")
	u.Set.LeavePause = true
	if op == OpApprove {
		u.Set.QueuedAt = now
		return u
	}
	u.Set.DropLease, u.Set.FinishedAt = true, now
	return u
}

// CancelRun abandons a queued, running, paused or failed run.
// Its child runs (started by its `workflow:` nodes), at any depth, are cancelled with it in the
// same transaction, as with every way a run is cancelled (ended).
func (m *Machine) CancelRun(ctx context.Context, runID string, by Actor, reason string, owe ...Owing) (Run, error) {
	now := m.Now()
	var out Run
	err := m.Driver.InTx(ctx, func(tx DriverTx) error {
		var err error
		out, err = m.transit(ctx, tx, OpCancel, leave(OpCancel, runID, now), one("", now, CancelData{By: by.ID, Reason: reason, Via: by.Via}), owe)
		return err
	})
	if err == nil && m.Moved != nil {
		m.Moved(OpCancel, out)
	}
	return out, err
}

// RescueExpired re-queues running runs whose lease expired before now, each counting a recovery; a
// run past maxRecoveries rescues without progress fails instead, so a run that kills its worker
// every time cannot loop forever.
func (m *Machine) RescueExpired(ctx context.Context, maxRecoveries int) ([]Rescue, error) {
	now := m.Now()
	var out []Rescue
	err := m.Driver.InControlTx(ctx, func(tx DriverTx) error {
		found, err := tx.Expired(ctx, now)
		if err != nil {
			return fmt.Errorf("rescue: %w", err)
		}
		out = out[:0]
		if len(found) == 0 {
			return nil
		}
		ts, exhausted := make([]Transit, len(found)), make([]bool, len(found))
		for i, x := range found {
			ts[i], exhausted[i] = rescue(x, maxRecoveries, now)
		}
		runs, err := m.transitAll(ctx, tx, OpRescue, ts)
		if err != nil {
			return err
		}
		for i, r := range runs {
			out = append(out, Rescue{Run: r, PrevOwner: found[i].Owner, Exhausted: exhausted[i]})
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, r := range out {
		if m.Moved != nil {
			m.Moved(OpRescue, r.Run)
		}
	}
	return out, nil
}

// rescue is the move of one expired run, guarded by the token, expiry and counter it was found
// with: if its worker heartbeated or finished meanwhile, the compare-and-set fails and the run is
// left alone. It goes to the back of the queue: a run that keeps killing its worker must not starve
// the others. exhausted says the move fails the run instead, its recovery budget spent.
func rescue(x Expired, maxRecoveries int, now time.Time) (t Transit, exhausted bool) {
	u := update(OpRescue, x.RunID, x.Token)
	u.Leased, u.ExpiredBefore, u.Recoveries = true, now, x.Recoveries
	u.Set.Recovered, u.Set.DropLease = true, true
	exhausted = x.Recoveries+1 > maxRecoveries
	events := one("", now, RunRescuedData{PrevOwner: x.Owner, Recoveries: x.Recoveries + 1})
	if exhausted {
		reason := RecoveryBudgetExhausted(x.Recoveries+1, maxRecoveries)
		u.Set.Status, u.Set.FinishedAt, u.Set.Meta.LastError = StatusFailed, now, &reason
		events = one("", now, reason)
	} else {
		u.Set.QueuedAt = now
	}
	return Transit{Update: u, Events: events(Run{ID: x.RunID})}, exhausted
}
