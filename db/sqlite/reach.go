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
		if _, err := tx.ExecContext(ctx, `DELETE FROM terminal_attachments WHERE expires_at < ?`, micros(now)); err != nil {
			return fmt.Errorf("forget expired terminal attachments: %w", translate(err))
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO terminal_attachments (conversation_id, owner, expires_at) VALUES (?, ?, ?)
			ON CONFLICT (conversation_id, owner) DO UPDATE SET expires_at = excluded.expires_at`, conversationID, owner, micros(now.Add(ttl)))
		if err != nil {
			return fmt.Errorf("attach terminal to %s: %w", conversationID, translate(err))
		}
		return nil
	})
}

// DetachTerminal ends every attachment of a terminal process.
func (s *Store) DetachTerminal(ctx context.Context, owner string) error {
	return s.write(ctx, func(tx *wtx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM terminal_attachments WHERE owner = ?`, owner); err != nil {
			return fmt.Errorf("detach terminal %s: %w", owner, translate(err))
		}
		return nil
	})
}
