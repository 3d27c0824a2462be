package postgres

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

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
