package sqlite

import (
	"context"
	"fmt"
	"strings"
	"time"

	"threadflow/db"
)

// runPlatform is the platform of a run: the first part of its conversation id.
const runPlatform = "substr(runs.conversation_id, 1, instr(runs.conversation_id, ':') - 1)"

// reachFilter is the condition (and its arguments) that keeps the runs in reach (db.Reach) at now;
// the zero Reach keeps every run.
func reachFilter(r db.Reach, now time.Time) (string, []any) {
	if r.Every() {
		return "", nil
	}
	var (
		conds []string
		args  []any
	)
	if len(r.Platforms) > 0 {
		conds = append(conds, runPlatform+" IN "+placeholders(len(r.Platforms)))
		args = appendStrings(args, r.Platforms)
	}
	if len(r.Conversations) > 0 {
		conds = append(conds, "runs.conversation_id IN "+placeholders(len(r.Conversations)))
		args = appendStrings(args, r.Conversations)
	}
	if len(r.Unattended) > 0 {
		conds = append(conds, "("+runPlatform+" IN "+placeholders(len(r.Unattended))+` AND NOT EXISTS (SELECT 1 FROM terminal_attachments a
			WHERE a.conversation_id = runs.conversation_id AND a.expires_at > ?))`)
		args = append(appendStrings(args, r.Unattended), micros(now))
	}
	return " AND (" + strings.Join(conds, " OR ") + ")", args
}

func placeholders(n int) string { return "(?" + strings.Repeat(", ?", n-1) + ")" }

func appendStrings(args []any, ss []string) []any {
	for _, s := range ss {
		args = append(args, s)
	}
	return args
}

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
