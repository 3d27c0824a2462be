package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"threadflow/db"
)

// reachFilter is the condition that keeps the runs in reach (db.Reach), given by reachArgs as the
// four query parameters from $first on; the zero Reach keeps every run.
func reachFilter(first int) string {
	p, c, u, now := fmt.Sprintf("$%d", first), fmt.Sprintf("$%d", first+1), fmt.Sprintf("$%d", first+2), fmt.Sprintf("$%d", first+3)
	platform := `split_part(runs.conversation_id, ':', 1)`
	return `(cardinality(` + p + `::text[]) + cardinality(` + c + `::text[]) + cardinality(` + u + `::text[]) = 0
		OR ` + platform + ` = ANY(` + p + `) OR runs.conversation_id = ANY(` + c + `)
		OR (` + platform + ` = ANY(` + u + `) AND NOT EXISTS (SELECT 1 FROM terminal_attachments a
			WHERE a.conversation_id = runs.conversation_id AND a.expires_at > ` + now + `::timestamptz)))`
}

// reachArgs are the parameters of reachFilter.
func reachArgs(r db.Reach, now time.Time) []any {
	return []any{append([]string{}, r.Platforms...), append([]string{}, r.Conversations...), append([]string{}, r.Unattended...), now}
}

// AttachTerminal records (or renews) a terminal's attachment to a conversation until ttl from now,
// and forgets attachments that expired (their terminals were killed).
func (s *Store) AttachTerminal(ctx context.Context, conversationID, owner string, ttl time.Duration) error {
	now := s.now()
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM terminal_attachments WHERE expires_at < $1`, now); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO terminal_attachments (conversation_id, owner, expires_at) VALUES ($1, $2, $3)
			ON CONFLICT (conversation_id, owner) DO UPDATE SET expires_at = excluded.expires_at`, conversationID, owner, now.Add(ttl))
		return err
	})
	if err != nil {
		return fmt.Errorf("attach terminal to %s: %w", conversationID, translate(err))
	}
	return nil
}

// DetachTerminal ends every attachment of a terminal process.
func (s *Store) DetachTerminal(ctx context.Context, owner string) error {
	if _, err := s.pool.Exec(ctx, `DELETE FROM terminal_attachments WHERE owner = $1`, owner); err != nil {
		return fmt.Errorf("detach terminal %s: %w", owner, translate(err))
	}
	return nil
}
