package db

import "time"

// The SQL of kept inbound events, written once for both engines (as in the other sql*.go files):
// how an event is kept, renewed, handled, and which events a process may take over.

// keptInbound is the condition that an inbound_events row keeps a message not yet handled.
// Handling clears the message, so the partial index inbound_events_kept holds only these.
const keptInbound = "message IS NOT NULL"

// KeepInbound inserts e at now unless the event is recorded already. A kept message is claimed by
// its owner until now + e.TTL; an event without one is handled as it is recorded.
func (d Dialect) KeepInbound(e KeptEvent, now time.Time) (string, []any) {
	q := d.Query()
	msg, until, handled := any(nil), time.Time{}, now
	if e.Message != nil {
		msg, until, handled = string(e.Message), now.Add(e.TTL), time.Time{}
	}
	return `INSERT INTO inbound_events (platform, event_id, received_at, message, claim_owner, claim_until, handled_at) VALUES (` +
		q.Arg(e.Platform) + ", " + q.Arg(e.EventID) + ", " + q.Time(now) + ", " + q.Arg(msg) + ", " + q.Arg(e.Owner) + ", " +
		q.NullTime(until) + ", " + q.NullTime(handled) + `) ON CONFLICT (platform, event_id) DO NOTHING`, q.Args
}

// HandledInbound records that e was handled at now and forgets its message: it is kept no longer.
func (d Dialect) HandledInbound(e InboundEvent, now time.Time) (string, []any) {
	q := d.Query()
	return `UPDATE inbound_events SET handled_at = ` + q.Time(now) + `, message = NULL, claim_owner = '', claim_until = NULL
		WHERE platform = ` + q.Arg(e.Platform) + ` AND event_id = ` + q.Arg(e.EventID) + ` AND ` + keptInbound, q.Args
}

// RenewInbound extends to until the claim of every event owner keeps: one statement per process and
// tick, over the few kept rows. An event another process took over is no longer owner's to renew.
func (d Dialect) RenewInbound(owner string, until time.Time) (string, []any) {
	q := d.Query()
	return `UPDATE inbound_events SET claim_until = ` + q.Time(until) + ` WHERE ` + keptInbound + ` AND claim_owner = ` + q.Arg(owner), q.Args
}

// ClaimInbound gives owner, until until, at most n kept events of platform whose claim lapsed at
// now (their process died before handling them), oldest claim first, and returns their messages
// and how many times each was taken over, this time included.
// The lapse is checked again on the row itself, so two processes taking over at once take each
// event once.
func (d Dialect) ClaimInbound(platform, owner string, now, until time.Time, n int) (string, []any) {
	q := d.Query()
	set := `UPDATE inbound_events SET claim_owner = ` + q.Arg(owner) + `, claim_until = ` + q.Time(until) + `, takeovers = takeovers + 1`
	lapsed := func() string {
		return keptInbound + ` AND platform = ` + q.Arg(platform) + ` AND claim_until < ` + q.Time(now)
	}
	return set + ` WHERE (platform, event_id) IN (SELECT platform, event_id FROM inbound_events WHERE ` + lapsed() +
		` ORDER BY claim_until LIMIT ` + q.Arg(n) + d.SkipLocked + `) AND ` + lapsed() + ` RETURNING platform, event_id, message, takeovers`, q.Args
}

// prunableInbound is the condition that an inbound event was handled (it keeps no message) and
// received before cut: Prune deletes it.
func prunableInbound(q *SQL, cut time.Time) string {
	return "NOT (" + keptInbound + ") AND received_at < " + q.Time(cut)
}

// PruneInbound deletes up to n handled inbound events received before cut (Prune). Without an
// index on received_at the walk is in storage order, oldest first, and stops after n.
func (d Dialect) PruneInbound(cut time.Time, n int) (string, []any) {
	q := d.Query()
	return "DELETE FROM inbound_events WHERE (platform, event_id) IN (SELECT platform, event_id FROM inbound_events WHERE " +
		prunableInbound(q, cut) + " LIMIT " + q.Arg(n) + d.SkipLocked + ")", q.Args
}

// CountPrunableInbound counts what PruneInbound deletes (a dry run).
func (d Dialect) CountPrunableInbound(cut time.Time) (string, []any) {
	q := d.Query()
	return "SELECT COUNT(*) FROM inbound_events WHERE " + prunableInbound(q, cut), q.Args
}
