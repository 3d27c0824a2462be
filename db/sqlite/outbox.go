package sqlite

import (
	"cmp"
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"threadflow/db"
)

// The outbox on SQLite (db.Outbox). Every write goes through the single writer, so a claim is a
// SELECT then an UPDATE in one BEGIN IMMEDIATE transaction with nobody in between.

// outboxColumns are unqualified: SQLite's RETURNING takes no table names.
const outboxColumns = `id, run_id, kind, key, target, ref_kind, reply, state, version, attempts,
	next_attempt_at, last_error, created_at, sent_at, message_id`

func scanOutbox(rows *sql.Rows) ([]db.OutboxEntry, error) {
	defer rows.Close()
	var out []db.OutboxEntry
	for rows.Next() {
		var (
			e             db.OutboxEntry
			reply         string
			next, created int64
			sent          sql.NullInt64
			target, state string
		)
		if err := rows.Scan(&e.ID, &e.RunID, &e.Kind, &e.Key, &target, &e.Ref, &reply, &state, &e.Version, &e.Attempts,
			&next, &e.LastError, &created, &sent, &e.MessageID); err != nil {
			return nil, translate(err)
		}
		e.Target, e.State, e.Reply = db.OwedTarget(target), db.OutboxState(state), []byte(reply)
		e.NextAttemptAt, e.CreatedAt, e.SentAt = fromMicros(next), fromMicros(created), fromNull(sent)
		out = append(out, e)
	}
	return out, translate(rows.Err())
}

// owe records owed messages (db.Dialect.Owe).
func owe(ctx context.Context, tx *wtx, runID string, owed []db.Owed, now time.Time) error {
	for _, o := range owed {
		q, args := dialect.Owe(runID, o, now)
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("owe %s %s of run %s: %w", o.Kind, o.Key, runID, translate(err))
		}
	}
	return nil
}

func (d dtx) Owe(ctx context.Context, runID string, owed []db.Owed, now time.Time) error {
	return owe(ctx, d.tx, runID, owed, now)
}

// Owe records messages the run owes outside a transition.
func (s *Store) Owe(ctx context.Context, runID string, owed ...db.Owed) error {
	if err := db.CheckOwed(owed); err != nil {
		return fmt.Errorf("run %s: %w", runID, err)
	}
	now := s.clock()
	return s.write(ctx, func(tx *wtx) error { return owe(ctx, tx, runID, owed, now) })
}

// ClaimOwed claims the due entries that are their run's next, of runs in reach.
func (s *Store) ClaimOwed(ctx context.Context, owner string, ttl time.Duration, reach db.Reach, n int) ([]db.OutboxEntry, error) {
	if owner == "" || ttl <= 0 || n <= 0 {
		return nil, fmt.Errorf("claim owed messages: need an owner, a positive claim duration and a count (got %q, %s, %d)", owner, ttl, n)
	}
	now := s.clock()
	var out []db.OutboxEntry
	err := s.write(ctx, func(tx *wtx) error {
		q, args := dialect.DueOwed(reach, now, n)
		rows, err := tx.QueryContext(ctx, q, args...)
		if err != nil {
			return translate(err)
		}
		var ids []any
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return translate(err)
			}
			ids = append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil || len(ids) == 0 {
			return translate(err)
		}
		in := "?" + strings.Repeat(", ?", len(ids)-1)
		rows, err = tx.QueryContext(ctx, `UPDATE run_outbox SET claim_owner = ?, claim_until = ?, attempts = attempts + 1
			WHERE id IN (`+in+`) RETURNING `+outboxColumns, append([]any{owner, micros(now.Add(ttl))}, ids...)...)
		if err != nil {
			return translate(err)
		}
		out, err = scanOutbox(rows)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("claim owed messages: %w", err)
	}
	slices.SortFunc(out, func(a, b db.OutboxEntry) int { return cmp.Compare(a.ID, b.ID) })
	return out, nil
}

// claimed reads the claim an outcome is recorded for: ErrOwedGone unless owner still holds the
// owed entry. same tells whether the entry is still the version the courier delivered.
func claimed(ctx context.Context, tx *wtx, runID, key, owner string, version int) (id int64, refKind string, same bool, err error) {
	var (
		claim, state string
		v            int
	)
	err = tx.QueryRowContext(ctx, `SELECT id, claim_owner, state, version, ref_kind FROM run_outbox WHERE run_id = ? AND key = ?`, runID, key).
		Scan(&id, &claim, &state, &v, &refKind)
	if isNotFound(err) {
		return 0, "", false, db.ErrOwedGone
	}
	if err != nil {
		return 0, "", false, translate(err)
	}
	if claim != owner || state != string(db.OutboxOwed) {
		return 0, "", false, db.ErrOwedGone
	}
	return id, refKind, v == version, nil
}

// DeliveredOwed records a delivery: the thread it opened, the message it posted, and the entry sent
// (or, when a Replace made it newer meanwhile, owed again with the posted message recorded).
func (s *Store) DeliveredOwed(ctx context.Context, d db.Delivery) error {
	now := s.clock()
	err := s.write(ctx, func(tx *wtx) error {
		id, refKind, same, err := claimed(ctx, tx, d.RunID, d.Key, d.Owner, d.Version)
		if err != nil {
			return err
		}
		for _, c := range d.Conversations {
			if err := insertConversation(ctx, tx, c, now); err != nil {
				return err
			}
		}
		if n := len(d.Conversations); n > 0 {
			q, args := dialect.SetRunConversation(d.RunID, d.Conversations[n-1].ID) // its children with it
			if _, err := tx.ExecContext(ctx, q, args...); err != nil {
				return translate(err)
			}
		}
		if d.Message.MessageID != "" && refKind != "" {
			ref := d.Message
			ref.RunID, ref.Kind = d.RunID, refKind
			if err := setMessageRef(ctx, tx, ref); err != nil {
				return err
			}
		}
		for _, e := range d.Events {
			if _, err := appendEvent(ctx, tx, d.RunID, newEvent{typ: e.Type, node: e.NodeID, attempt: e.Attempt, data: e.Data}, now); err != nil {
				return err
			}
		}
		var end db.OwedEnd
		if same {
			end = db.OwedEnd{State: db.OutboxSent, MessageID: d.Message.MessageID}
		}
		q, args := dialect.EndOwed(id, end, now)
		_, err = tx.ExecContext(ctx, q, args...)
		return translate(err)
	})
	if err != nil {
		return fmt.Errorf("record delivery of message %s of run %s: %w", d.Key, d.RunID, err)
	}
	return nil
}

// RetryOwed records an attempt that did not deliver.
func (s *Store) RetryOwed(ctx context.Context, r db.Retry) error {
	err := s.write(ctx, func(tx *wtx) error {
		id, _, same, err := claimed(ctx, tx, r.RunID, r.Key, r.Owner, r.Version)
		if err != nil {
			return err
		}
		q, args := dialect.EndOwed(id, db.RetryEnd(r, same), s.clock())
		_, err = tx.ExecContext(ctx, q, args...)
		return translate(err)
	})
	if err != nil {
		return fmt.Errorf("record failed delivery of message %s of run %s: %w", r.Key, r.RunID, err)
	}
	return nil
}

// NextOwed is when the next entry that is its run's next is due (or its claim runs out).
func (s *Store) NextOwed(ctx context.Context, reach db.Reach) (time.Time, bool, error) {
	var next sql.NullInt64
	q, args := dialect.NextOwed(reach, s.clock())
	err := s.r.QueryRowContext(ctx, q, args...).Scan(&next)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("next owed message: %w", translate(err))
	}
	return fromNull(next), next.Valid, nil
}

// Undelivered lists the run's entries that are owed or failed.
func (s *Store) Undelivered(ctx context.Context, runID string) ([]db.OutboxEntry, error) {
	q, args := dialect.Undelivered(outboxColumns, runID)
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("undelivered messages of run %s: %w", runID, translate(err))
	}
	return scanOutbox(rows)
}
