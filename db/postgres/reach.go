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
	forget, forgetArgs := dialect.ForgetExpiredAttachments(now)
	attach, attachArgs := dialect.AttachTerminal(conversationID, owner, now.Add(ttl))
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, forget, forgetArgs...); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, attach, attachArgs...)
		return err
	})
	if err != nil {
		return fmt.Errorf("attach terminal to %s: %w", conversationID, translate(err))
	}
	return nil
}

// DetachTerminal ends every attachment of a terminal process.
func (s *Store) DetachTerminal(ctx context.Context, owner string) error {
	q, args := dialect.DetachTerminal(owner)
	if _, err := s.pool.Exec(ctx, q, args...); err != nil {
		return fmt.Errorf("detach terminal %s: %w", owner, translate(err))
	}
	return nil
}
