package db

import (
	"context"
	"time"
)

// Driver is what a database engine gives the transition core (Machine): transactions whose
// statements only run SQL and scan rows. Every decision (which statuses a write leaves, which lease
// it needs, which events it appends, what a lost race returns) is the core's; an engine renders the
// RunUpdate it is handed as one UPDATE and reports whether a row matched.
type Driver interface {
	// InTx runs fn in one write transaction, committing when fn returns nil. Driver errors come out
	// translated into this package's errors (ErrUnavailable, ErrUnwritable, ...).
	InTx(ctx context.Context, fn func(tx DriverTx) error) error
	// InControlTx is InTx for the lease work a replica's health depends on (claims, rescues, and on
	// SQLite renewals), where the engine can put it ahead of the replica's own burst of writes: on
	// SQLite it goes before the queued writers of the single connection; on PostgreSQL it is InTx
	// (see its driver for why; renewals there have a connection of their own).
	InControlTx(ctx context.Context, fn func(tx DriverTx) error) error
	// AppendLeased appends e in a transaction of its own as one compare-and-set: only while l is
	// the lease of a running run and, when e is a lifecycle event, no copy of it is recorded;
	// with reset it also sets the run's rescue counter back to 0. ok is false when it appended
	// nothing, also when a concurrent copy of e won: the caller then finds out why in a
	// transaction (ExplainMiss, or a replay).
	AppendLeased(ctx context.Context, l Lease, e Event, reset bool) (out Event, ok bool, err error)
	// AppendLeasedAll is AppendLeased for each of es in order (resets[i] for es[i]) in one
	// transaction. ok[i] tells which were appended, all committed together; the others appended
	// nothing, as AppendLeased's ok would say. With an error nothing was appended.
	AppendLeasedAll(ctx context.Context, l Lease, es []Event, resets []bool) (out []Event, ok []bool, err error)
	// RenewLeases sets lease_expires_at = expires and heartbeat_at = now, in one transaction, on
	// every run of ls that is running under that lease, and returns the leases of ls it did not
	// renew, in their order in ls.
	RenewLeases(ctx context.Context, ls []Lease, expires, now time.Time) (lost []Lease, err error)
	// InsertRuns writes each of cs in one transaction (its conversation unless that exists, the
	// queued run, its run_created event at seq 1, its messages, what it owes) and returns the runs in order. With an
	// error nothing was written.
	InsertRuns(ctx context.Context, cs []RunCreation) ([]Run, error)
	// Dialect is how the engine writes SQL.
	Dialect() Dialect
	// Query runs a read rendered by this package outside any write transaction (Querier).
	Querier
	// ReadRow runs a query of one row outside any write transaction, scanning it into dest;
	// ErrNotFound when it returns no row.
	ReadRow(ctx context.Context, q string, args []any, dest ...any) error
	// ReadStrings runs a query of one text column outside any write transaction.
	ReadStrings(ctx context.Context, q string, args []any) ([]string, error)
	// DueGateTimers lists the paused approval runs in reach with a gate timer due at now, at most
	// n of them, in id order.
	DueGateTimers(ctx context.Context, reach Reach, now time.Time, n int) ([]string, error)
}

// Querier runs a query rendered by this package and calls each with every row's scan, in order.
type Querier interface {
	Query(ctx context.Context, q string, args []any, each func(scan func(dest ...any) error) error) error
}

// DriverTx is one transaction of a Driver.
type DriverTx interface {
	// Query runs a query rendered by this package in the transaction (Querier).
	Querier
	// UpdateRun runs the compare-and-set u: UPDATE runs SET u.Set WHERE u's guard RETURNING the run.
	// ok is false when no row matched.
	UpdateRun(ctx context.Context, u RunUpdate) (r Run, ok bool, err error)
	// TransitAll runs each compare-and-set of ts and, for each one that matched, appends its events
	// at the run's next seqs, in order. ok[i] tells whether ts[i] matched; runs[i] is then the run
	// it left. An engine may send them all at once: nothing of one depends on another's result.
	TransitAll(ctx context.Context, ts []Transit) (runs []Run, ok []bool, err error)
	// InsertRun writes one creation as Driver.InsertRuns does, in this transaction.
	InsertRun(ctx context.Context, c RunCreation) (Run, error)
	// Exec runs a statement the core rendered and returns how many rows it changed.
	Exec(ctx context.Context, q string, args []any) (int64, error)
	// QueryStrings runs a query of one text column the core rendered, appending its rows to out.
	QueryStrings(ctx context.Context, q string, args []any, out *[]string) error
	// QueryRow runs a query of one row the core rendered, scanning it into dest; ErrNotFound when
	// it returns no row.
	QueryRow(ctx context.Context, q string, args []any, dest ...any) error
	// LockRun reads a run and holds its row until the transaction ends; ErrNotFound if none.
	LockRun(ctx context.Context, runID string) (Run, error)
	// AppendEvent gives e the run's next seq and inserts it.
	AppendEvent(ctx context.Context, e Event) (Event, error)
	// NextQueued are the ids of the n oldest (queued_at, id) queued runs in reach at now that no
	// other transaction holds, held until the transaction ends; empty when there is none.
	NextQueued(ctx context.Context, reach Reach, now time.Time, n int) ([]string, error)
	// Expired lists the running runs whose lease expired before now, oldest expiry first, skipping
	// rows another transaction holds.
	Expired(ctx context.Context, now time.Time) ([]Expired, error)
	// LastAsk is the node and seq of the latest gate_requested of node (of any node when node is
	// ""); seq is 0 when none was asked.
	LastAsk(ctx context.Context, runID, node string) (string, int64, error)
	// GateEvents are the node's gate_approval and gate_resolved events after seq, in order.
	GateEvents(ctx context.Context, runID, node string, after int64) ([]Event, error)
	// EventAt is the run's event at seq; ErrNotFound if none.
	EventAt(ctx context.Context, runID string, seq int64) (Event, error)
	// LeaseForEvent reads what recording e under l depends on, in one statement: whether l is the
	// lease of a running run (holding the run's row until the transaction ends when it is), the
	// run's rescue counter, and the recorded copy of e when e is a lifecycle event (Idempotent).
	LeaseForEvent(ctx context.Context, l Lease, e Event) (EventLease, error)
	// OpenChildren are the ids of the run's child runs (runs.parent_run_id) that are not completed
	// or cancelled, in id order.
	OpenChildren(ctx context.Context, runID string) ([]string, error)
	// ResetRecoveries sets the run's rescue counter back to 0.
	ResetRecoveries(ctx context.Context, runID string) error
	// Owe records messages the run owes, due at now, after every message it owes already
	// (Owed.Replace rewrites the one under the same key instead: see Owed).
	Owe(ctx context.Context, runID string, owed []Owed, now time.Time) error
}

// Transit is one compare-and-set with the events it appends when it matches (their RunID is the
// update's run).
type Transit struct {
	Update RunUpdate
	Events []Event
}

// TransitEach is TransitAll as one statement after another in tx, for an engine where a statement
// costs no round trip.
func TransitEach(ctx context.Context, tx DriverTx, ts []Transit) ([]Run, []bool, error) {
	runs, ok := make([]Run, len(ts)), make([]bool, len(ts))
	for i, t := range ts {
		var err error
		if runs[i], ok[i], err = tx.UpdateRun(ctx, t.Update); err != nil {
			return nil, nil, err
		}
		if !ok[i] {
			continue
		}
		for _, e := range t.Events {
			if _, err := tx.AppendEvent(ctx, e); err != nil {
				return nil, nil, err
			}
		}
	}
	return runs, ok, nil
}

// EventLease is what LeaseForEvent found.
type EventLease struct {
	Held       bool  // l is the lease of the running run
	Recoveries int   // the run's rescue counter, when held
	Stored     Event // the recorded copy of the lifecycle event, when Found
	Found      bool
}

// Expired is a running run whose lease ran out, as the rescuer found it.
type Expired struct {
	RunID, Owner, Token string
	Recoveries          int
}

// RunUpdate is one compare-and-set on a run, decided by the core. The guard is
// `id = RunID AND status IN From`, and each set field below adds its condition.
type RunUpdate struct {
	RunID string
	From  []Status
	// Token, when Leased: AND lease_token = Token AND lease_token <> ''.
	Leased bool
	Token  string
	// IfPaused, when set: AND (status <> 'paused' OR pause_kind IN IfPaused).
	IfPaused []PauseKind
	// PauseNode, when set: AND pause_node = PauseNode.
	PauseNode string
	// ExpiredBefore, when set: AND lease_expires_at < ExpiredBefore AND recoveries = Recoveries.
	ExpiredBefore time.Time
	Recoveries    int
	Set           RunSet
}

// RunSet is what a compare-and-set writes. Zero fields leave their columns alone.
type RunSet struct {
	Status      Status
	Lease       *Lease    // lease_owner, lease_token
	ExpiresAt   time.Time // lease_expires_at
	HeartbeatAt time.Time // heartbeat_at
	StartedAt   time.Time // started_at, unless it is set already
	DropLease   bool      // lease_owner = '', lease_token = '', lease_expires_at = NULL
	EndLease    bool      // lease_expires_at = NULL; the token stays, so a replay is recognised
	Pause       *Pause    // pause_kind, pause_node, gate_due_at, gate_remind_at, gate_escalate_at (meta.pause is in Meta)
	LeavePause  bool      // pause_kind = '', pause_node = '', gate timers NULL, meta.pause removed
	QueuedAt    time.Time
	FinishedAt  time.Time
	Reopen      bool // finished_at = NULL
	NextAttempt bool // attempt + 1
	Recovered   bool // recoveries + 1
	// Meta's non-empty top-level fields replace the run's; ResumedFrom (when set) records the status
	// the run had before this update instead of Meta.ResumedFrom.
	Meta        Meta
	ResumedFrom bool
	// Workspace: working_path, workspace_home and workspace_remote; ForgetWorkspace clears the last
	// two, so the next worker makes a new workspace.
	Workspace       *Workspace
	ForgetWorkspace bool
}
