package db

// The batch rules: how many rows one transaction or statement writes or reads at most. Each rule
// has this one constant, which the store, its callers and the docs name (README.md,
// docs/design-notes.md, BENCHMARKS.md), so a figure cannot drift between them.
const (
	// MaxClaimBatch bounds one ClaimRuns transaction. A replica with free slots claims up to this
	// many runs at once: after a restart with a thousand runs to take over, each claim of a few
	// dozen waited behind the CPU of the takeovers the claim before it started (tens of
	// milliseconds per round trip on two cores), so claims of 32 took 1.5-2 s longer than claims of
	// 256 (BENCHMARKS.md, recovery). A claim of 256 is one round trip on PostgreSQL (TransitAll)
	// and holds its rows for milliseconds.
	MaxClaimBatch = 256

	// MaxRenewBatch bounds one RenewLeases transaction, and the workers renew their leases in
	// batches of this size: large enough that a replica holding a thousand runs commits a handful
	// of times per tick, small enough that the renewed rows are held briefly (a node's event waits
	// for its run's row).
	MaxRenewBatch = 128

	// MaxCreateBatch bounds the runs one CreateRun group commit writes (groupcommit).
	MaxCreateBatch = 64

	// MaxInboundBatch is the most inbound events a BatchKeeper writes at once (conversation): one
	// KeepInbound transaction, one round trip on PostgreSQL, for a burst of messages.
	MaxInboundBatch = 500

	// MaxOwedBatch bounds the owed messages one courier claim takes (Store.ClaimOwed); each is the
	// next of a different run, and the courier delivers them at once, a few at a time.
	MaxOwedBatch = 32

	// MaxTimerBatch bounds the due gate timers one FireGateTimers call fires; the rest fire at the
	// next call, which the gate timer loop makes at once when this one fired a full batch.
	MaxTimerBatch = 100

	// MaxPruneBatch bounds the runs one prune transaction deletes (Store.Prune), with everything
	// they own: each transaction holds its rows for milliseconds, so runs being worked on never
	// wait long behind retention, and a stop loses at most one batch's work.
	MaxPruneBatch = 50
	// MaxInboundPruneBatch bounds the handled inbound events one prune statement deletes.
	MaxInboundPruneBatch = 1000

	// DefaultListLimit is how many runs a listing (ListRuns, FindRunsByPrefix) returns when the
	// caller does not say.
	DefaultListLimit = 100
)

// ListLimit is limit, or DefaultListLimit when limit does not say how many (zero or less).
func ListLimit(limit int) int {
	if limit <= 0 {
		return DefaultListLimit
	}
	return limit
}
