package postgres

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"

	"threadflow/db"
)

// The outbox on PostgreSQL (db.Outbox). A claim takes the rows it returns with FOR UPDATE SKIP
// LOCKED, so two replicas claiming at once split the owed messages instead of waiting on each
// other, and a run's later message is never claimed while an earlier one is owed.

const outboxColumns = `o.id, o.run_id, o.kind, o.key, o.target, o.ref_kind, o.reply, o.state, o.version, o.attempts,
	o.next_attempt_at, o.last_error, o.created_at, o.sent_at, o.message_id`

func scanOutbox(rows pgx.Rows) ([]db.OutboxEntry, error) {
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (db.OutboxEntry, error) {
		var (
			e             db.OutboxEntry
			target, state string
			sent          *time.Time
		)
		err := row.Scan(&e.ID, &e.RunID, &e.Kind, &e.Key, &target, &e.Ref, &e.Reply, &state, &e.Version, &e.Attempts,
			&e.NextAttemptAt, &e.LastError, &e.CreatedAt, &sent, &e.MessageID)
		e.Target, e.State = db.OwedTarget(target), db.OutboxState(state)
		e.NextAttemptAt, e.CreatedAt = e.NextAttemptAt.UTC(), e.CreatedAt.UTC()
		if sent != nil {
			e.SentAt = sent.UTC()
		}
		return e, err
	})
	return out, translate(err)
}

func (d dtx) Owe(ctx context.Context, runID string, owed []db.Owed, now time.Time) error {
	for _, o := range owed {
		q, args := dialect.Owe(runID, o, now)
		if _, err := d.tx.Exec(ctx, q, args...); err != nil {
			return fmt.Errorf("owe %s %s of run %s: %w", o.Kind, o.Key, runID, err)
		}
	}
	return nil
}

// Owe records messages the run owes outside a transition, in one batch.
func (s *Store) Owe(ctx context.Context, runID string, owed ...db.Owed) error {
	if err := db.CheckOwed(owed); err != nil {
		return fmt.Errorf("run %s: %w", runID, err)
	}
	now := s.now()
	b := &pgx.Batch{}
	for _, o := range owed {
		q, args := dialect.Owe(runID, o, now)
		b.Queue(q, args...)
	}
	if err := s.pool.SendBatch(ctx, b).Close(); err != nil {
		return fmt.Errorf("owe messages of run %s: %w", runID, translate(err))
	}
	return nil
}

// ClaimOwed claims the due entries that are their run's next, of runs in reach, in one statement.
func (s *Store) ClaimOwed(ctx context.Context, owner string, ttl time.Duration, reach db.Reach, n int) ([]db.OutboxEntry, error) {
	if owner == "" || ttl <= 0 || n <= 0 {
		return nil, fmt.Errorf("claim owed messages: need an owner, a positive claim duration and a count (got %q, %s, %d)", owner, ttl, n)
	}
	now := s.now()
	due, args := dialect.DueOwed(reach, now, n)
	k := len(args)
	rows, err := s.pool.Query(ctx, `WITH due AS (`+due+`),
		claimed AS (UPDATE run_outbox o SET claim_owner = $`+strconv.Itoa(k+1)+`, claim_until = $`+strconv.Itoa(k+2)+`, attempts = o.attempts + 1
			FROM due WHERE o.id = due.id RETURNING `+outboxColumns+`)
		SELECT * FROM claimed o ORDER BY o.id`, append(args, owner, now.Add(ttl))...)
	if err != nil {
		return nil, fmt.Errorf("claim owed messages: %w", translate(err))
	}
	out, err := scanOutbox(rows)
	if err != nil {
		return nil, fmt.Errorf("claim owed messages: %w", err)
	}
	return out, nil
}

// claimed reads, holding it, the claim an outcome is recorded for: ErrOwedGone unless owner still
// holds the owed entry. same tells whether it is still the version the courier delivered.
func claimed(ctx context.Context, tx pgx.Tx, runID, key, owner string, version int) (id int64, refKind string, same bool, err error) {
	var (
		claim, state string
		v            int
	)
	err = tx.QueryRow(ctx, `SELECT id, claim_owner, state, version, ref_kind FROM run_outbox WHERE run_id = $1 AND key = $2 FOR UPDATE`, runID, key).
		Scan(&id, &claim, &state, &v, &refKind)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, "", false, db.ErrOwedGone
	}
	if err != nil {
		return 0, "", false, err
	}
	if claim != owner || state != string(db.OutboxOwed) {
		return 0, "", false, db.ErrOwedGone
	}
	return id, refKind, v == version, nil
}

// DeliveredOwed records a delivery: the thread it opened, the message it posted, and the entry sent
// (or, when a Replace made it newer meanwhile, owed again with the posted message recorded).
func (s *Store) DeliveredOwed(ctx context.Context, d db.Delivery) error {
	now := s.now()
	err := s.inTx(ctx, func(tx pgx.Tx) error {
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
			if _, err := tx.Exec(ctx, q, args...); err != nil {
				return err
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
			e.RunID, e.At = d.RunID, now
			if _, err := appendEvent(ctx, tx, e); err != nil {
				return err
			}
		}
		var end db.OwedEnd
		if same {
			end = db.OwedEnd{State: db.OutboxSent, MessageID: d.Message.MessageID}
		}
		q, args := dialect.EndOwed(id, end, now)
		_, err = tx.Exec(ctx, q, args...)
		return err
	})
	if err != nil {
		return fmt.Errorf("record delivery of message %s of run %s: %w", d.Key, d.RunID, err)
	}
	return nil
}

// RetryOwed records an attempt that did not deliver.
func (s *Store) RetryOwed(ctx context.Context, r db.Retry) error {
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		id, _, same, err := claimed(ctx, tx, r.RunID, r.Key, r.Owner, r.Version)
		if err != nil {
			return err
		}
		q, args := dialect.EndOwed(id, db.RetryEnd(r, same), s.now())
		_, err = tx.Exec(ctx, q, args...)
		return err
	})
	if err != nil {
		return fmt.Errorf("record failed delivery of message %s of run %s: %w", r.Key, r.RunID, err)
	}
	return nil
}

// NextOwed is when the next entry that is its run's next is due (or its claim runs out).
func (s *Store) NextOwed(ctx context.Context, reach db.Reach) (time.Time, bool, error) {
	now := s.now()
	var next *time.Time
	q, args := dialect.NextOwed(reach, now)
	err := s.pool.QueryRow(ctx, q, args...).Scan(&next)
	if err != nil {
		return time.Time{}, false, fmt.Errorf("next owed message: %w", translate(err))
	}
	if next == nil {
		return time.Time{}, false, nil
	}
	return next.UTC(), true, nil
}

// Undelivered lists the run's entries that are owed or failed.
func (s *Store) Undelivered(ctx context.Context, runID string) ([]db.OutboxEntry, error) {
	q, args := dialect.Undelivered(outboxColumns, runID)
	rows, err := s.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("undelivered messages of run %s: %w", runID, translate(err))
	}
	return scanOutbox(rows)
}
