package sqlite

import (
	"context"
	"fmt"
	"time"
)

// AttachTerminal records (or renews) a terminal's attachment to a conversation until ttl from now,
// and forgets attachments that expired (their terminals were killed).
func (s *Store) AttachTerminal(ctx context.Context, conversationID, owner string, ttl time.Duration) error {
	now := s.clock()
	return s.write(ctx, func(tx *wtx) error {
		q, args := dialect.ForgetExpiredAttachments(now)
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("forget expired terminal attachments: %w", translate(err))
		}
		q, args = dialect.AttachTerminal(conversationID, owner, now.Add(ttl))
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("attach terminal to %s: %w", conversationID, translate(err))
		}
		return nil
	})
}

// DetachTerminal ends every attachment of a terminal process.
func (s *Store) DetachTerminal(ctx context.Context, owner string) error {
	return s.write(ctx, func(tx *wtx) error {
		q, args := dialect.DetachTerminal(owner)
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
			return fmt.Errorf("detach terminal %s: %w", owner, translate(err))
		}
		return nil
	})
}
