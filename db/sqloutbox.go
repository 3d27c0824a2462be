package db

import (
	"strings"
	"time"
)

// The outbox's deciding SQL, written once for both engines (as in the other sql*.go files): which owed message a
// courier may claim, when the next one is due, and how a message is owed.

// firstOwed is the condition that the outbox row o is owed and is its run's next: a run's messages
// go out in order, and a message failed for good no longer holds the others back. A child run's
// messages also wait for the announcement that opens its parent's thread (runs is o's run): they
// are said in that thread, where the delivery that opens it moves the child (SetRunConversation).
const firstOwed = `o.state = 'owed' AND NOT EXISTS (SELECT 1 FROM run_outbox p
	WHERE p.run_id = o.run_id AND p.state = 'owed' AND p.id < o.id) AND NOT EXISTS (SELECT 1 FROM run_outbox p
	WHERE p.run_id = runs.parent_run_id AND p.state = 'owed' AND p.target = 'open')`

// DueOwed selects the ids of at most n owed messages a courier with reach r may claim at now (the
// next of their runs, due, not claimed by a courier whose claim still holds), oldest first, taking
// their rows.
func (d Dialect) DueOwed(r Reach, now time.Time, n int) (string, []any) {
	q := d.Query()
	due := "o.next_attempt_at <= " + q.Time(now) + " AND (o.claim_until IS NULL OR o.claim_until < " + q.Time(now) + ")"
	lock := ""
	if d.SkipLocked != "" {
		lock = strings.Replace(d.SkipLocked, "FOR UPDATE", "FOR UPDATE OF o", 1) // the run's row stays free
	}
	return "SELECT o.id FROM run_outbox o JOIN runs ON runs.id = o.run_id" + whereAll(firstOwed, due, q.Reachable(r, now)) +
		" ORDER BY o.id LIMIT " + q.Arg(n) + lock, q.Args
}

// NextOwed selects when the next owed message of a run in reach is due, or its claim runs out
// (Outbox.NextOwed); NULL when none is owed.
func (d Dialect) NextOwed(r Reach, now time.Time) (string, []any) {
	q := d.Query()
	return `SELECT MIN(CASE WHEN o.claim_until IS NOT NULL AND o.claim_until > o.next_attempt_at THEN o.claim_until
		ELSE o.next_attempt_at END) FROM run_outbox o JOIN runs ON runs.id = o.run_id` + whereAll(firstOwed, q.Reachable(r, now)), q.Args
}

// Owe inserts one owed message at now, after the run's others. A key owed already is the same
// message and stays as it is, unless Replace asks for the latest content: then a different reply
// replaces it (a newer version, owed again if it was sent, moved after the run's others), and the
// same reply changes nothing.
func (d Dialect) Owe(runID string, o Owed, now time.Time) (string, []any) {
	q := d.Query()
	s := `INSERT INTO run_outbox (run_id, kind, key, target, ref_kind, reply, next_attempt_at, created_at) VALUES (` +
		strings.Join([]string{q.Arg(runID), q.Arg(o.Kind), q.Arg(o.Key), q.Arg(string(o.Target)), q.Arg(o.Ref), q.Arg(string(o.Reply)),
			q.Time(now), q.Time(now)}, ", ") + `) ON CONFLICT (run_id, key) `
	if !o.Replace {
		return s + "DO NOTHING", q.Args
	}
	return s + `DO UPDATE SET id = ` + d.NextOutboxID + `, reply = excluded.reply, kind = excluded.kind, target = excluded.target,
		ref_kind = excluded.ref_kind, version = run_outbox.version + 1,
		attempts = CASE WHEN run_outbox.state = 'owed' THEN run_outbox.attempts ELSE 0 END,
		state = 'owed', next_attempt_at = excluded.next_attempt_at, last_error = ''
		WHERE run_outbox.reply <> excluded.reply`, q.Args
}

// OwedEnd is how a courier's claim on an owed message ends (OwedEnding): released untouched, sent
// with the platform's message id, retried later, or failed for good.
type OwedEnd struct {
	State     OutboxState // OutboxSent or OutboxFailed; "" keeps the state (a retry, or a mere release)
	MessageID string      // with OutboxSent
	RetryAt   time.Time   // with "" state: when to try again; zero releases the claim only
	Error     string      // the platform's words for a retry or a failure
}

// EndOwed releases the claim on owed message id and records how the attempt ended (DeliveredOwed,
// RetryOwed).
func (d Dialect) EndOwed(id int64, e OwedEnd, now time.Time) (string, []any) {
	q := d.Query()
	set := []string{"claim_owner = ''", "claim_until = NULL"}
	switch {
	case e.State == OutboxSent:
		set = append(set, "state = "+lit(OutboxSent), "sent_at = "+q.Time(now), "message_id = "+q.Arg(e.MessageID), "last_error = ''")
	case e.State == OutboxFailed:
		set = append(set, "state = "+lit(OutboxFailed), "last_error = "+q.Arg(e.Error))
	case !e.RetryAt.IsZero():
		set = append(set, "next_attempt_at = "+q.Time(e.RetryAt), "last_error = "+q.Arg(e.Error))
	}
	return "UPDATE run_outbox SET " + strings.Join(set, ", ") + " WHERE id = " + q.Arg(id), q.Args
}

// Undelivered selects the run's messages that are owed or failed, in the order they were owed
// (Outbox.Undelivered); columns as the engine's outboxColumns.
func (d Dialect) Undelivered(columns, runID string) (string, []any) {
	q := d.Query()
	return "SELECT " + columns + " FROM run_outbox o WHERE o.run_id = " + q.Arg(runID) + " AND o.state <> " + lit(OutboxSent) + " ORDER BY o.id", q.Args
}

// RetryEnd is how an attempt that did not deliver ends: failed for good when r says so, else tried
// again at r.At; a courier that no longer holds the claim (!held) only lets go of it.
func RetryEnd(r Retry, held bool) OwedEnd {
	switch {
	case !held:
		return OwedEnd{}
	case r.Fail:
		return OwedEnd{State: OutboxFailed, Error: r.Error}
	default:
		return OwedEnd{RetryAt: r.At, Error: r.Error}
	}
}
