package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"threadflow/db"
)

// EnsureConversation inserts c when its id is new and returns the stored conversation; the first
// writer's fields win. A thread's parent conversation must exist.
func (s *Store) EnsureConversation(ctx context.Context, c db.Conversation) (db.Conversation, error) {
	c, err := c.Checked()
	if err != nil {
		return db.Conversation{}, fmt.Errorf("ensure %w", err)
	}
	var out db.Conversation
	err = s.write(ctx, func(tx *wtx) error {
		if err := insertConversation(ctx, tx, c, s.clock()); err != nil {
			return err
		}
		var (
			parent  sql.NullString
			created int64
		)
		err = tx.QueryRowContext(ctx, `SELECT id, platform, channel_id, thread_id, parent_id, created_at FROM conversations WHERE id = ?`, c.ID).
			Scan(&out.ID, &out.Platform, &out.ChannelID, &out.ThreadID, &parent, &created)
		if err != nil {
			return fmt.Errorf("ensure conversation %s: %w", c.ID, translate(err))
		}
		out.ParentID, out.CreatedAt = parent.String, fromMicros(created)
		return nil
	})
	return out, err
}

// insertConversation records c unless its id is known already.
func insertConversation(ctx context.Context, tx *wtx, c db.Conversation, now time.Time) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO conversations (id, platform, channel_id, thread_id, parent_id, created_at)
		VALUES (?, ?, ?, ?, NULLIF(?, ''), ?) ON CONFLICT (id) DO NOTHING`,
		c.ID, c.Platform, c.ChannelID, c.ThreadID, c.ParentID, micros(now))
	if err != nil {
		return fmt.Errorf("ensure conversation %s: %w", c.ID, translate(err))
	}
	return nil
}

// GetSession returns the session stored under (conversation, run, node), or db.ErrNotFound.
func (s *Store) GetSession(ctx context.Context, conversationID, runID, nodeID string) (db.Session, error) {
	out := db.Session{ConversationID: conversationID, RunID: runID, NodeID: nodeID}
	var (
		id      sql.NullString
		updated int64
	)
	err := s.r.QueryRowContext(ctx, `SELECT provider, session_id, updated_at FROM sessions
		WHERE conversation_id = ? AND run_id = ? AND node_id = ?`, conversationID, runID, nodeID).Scan(&out.Provider, &id, &updated)
	if err != nil {
		return db.Session{}, fmt.Errorf("get session: %w", translate(err))
	}
	out.SessionID, out.UpdatedAt = id.String, fromMicros(updated)
	return out, nil
}

// SetSession stores s; an empty SessionID is stored as NULL, meaning the next turn starts fresh.
func (s *Store) SetSession(ctx context.Context, sess db.Session) error {
	return s.write(ctx, func(tx *wtx) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO sessions (conversation_id, run_id, node_id, provider, session_id, updated_at)
			VALUES (?, ?, ?, ?, NULLIF(?, ''), ?)
			ON CONFLICT (conversation_id, run_id, node_id) DO UPDATE
			SET provider = excluded.provider, session_id = excluded.session_id, updated_at = excluded.updated_at`,
			sess.ConversationID, sess.RunID, sess.NodeID, sess.Provider, sess.SessionID, micros(s.clock()))
		if err != nil {
			return fmt.Errorf("set session: %w", translate(err))
		}
		return nil
	})
}

// SetMessageRef records (or, with an empty MessageID, forgets) one message of a run.
func (s *Store) SetMessageRef(ctx context.Context, ref db.MessageRef) error {
	return s.write(ctx, func(tx *wtx) error { return setMessageRef(ctx, tx, ref) })
}

func setMessageRef(ctx context.Context, tx *wtx, ref db.MessageRef) error {
	var err error
	if ref.MessageID == "" {
		_, err = tx.ExecContext(ctx, `DELETE FROM run_messages WHERE run_id = ? AND kind = ?`, ref.RunID, ref.Kind)
	} else {
		_, err = tx.ExecContext(ctx, `INSERT INTO run_messages (run_id, kind, platform, channel_id, thread_id, message_id)
			VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, kind) DO UPDATE SET platform = excluded.platform,
			channel_id = excluded.channel_id, thread_id = excluded.thread_id, message_id = excluded.message_id`,
			ref.RunID, ref.Kind, ref.Platform, ref.ChannelID, ref.ThreadID, ref.MessageID)
	}
	if err != nil {
		return fmt.Errorf("set %s message of run %s: %w", ref.Kind, ref.RunID, translate(err))
	}
	return nil
}

// MessageRefs returns the messages recorded for a run, by kind.
func (s *Store) MessageRefs(ctx context.Context, runID string) ([]db.MessageRef, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT kind, platform, channel_id, thread_id, message_id FROM run_messages
		WHERE run_id = ? ORDER BY kind`, runID)
	if err != nil {
		return nil, fmt.Errorf("read messages of run %s: %w", runID, translate(err))
	}
	defer rows.Close()
	var out []db.MessageRef
	for rows.Next() {
		ref := db.MessageRef{RunID: runID}
		if err := rows.Scan(&ref.Kind, &ref.Platform, &ref.ChannelID, &ref.ThreadID, &ref.MessageID); err != nil {
			return nil, translate(err)
		}
		out = append(out, ref)
	}
	return out, translate(rows.Err())
}
