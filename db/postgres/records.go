package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"threadflow/db"
)

// execer is what a pool and a transaction share, so one statement serves both.
type execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

const insertConversationSQL = `INSERT INTO conversations (id, platform, channel_id, thread_id, parent_id, created_at)
	VALUES ($1, $2, $3, $4, NULLIF($5, ''), $6) ON CONFLICT (id) DO NOTHING`

// insertConversation records c unless its id is known already.
func insertConversation(ctx context.Context, x execer, c db.Conversation, now time.Time) error {
	_, err := x.Exec(ctx, insertConversationSQL, c.ID, c.Platform, c.ChannelID, c.ThreadID, c.ParentID, now)
	if err != nil {
		return fmt.Errorf("ensure conversation %s: %w", c.ID, translate(err))
	}
	return nil
}

const conversationColumns = `id, platform, channel_id, thread_id, COALESCE(parent_id, ''), created_at`

// EnsureConversation inserts c when its id is new and returns the stored conversation. An empty id
// is derived with db.ConversationKey.
func (s *Store) EnsureConversation(ctx context.Context, c db.Conversation) (db.Conversation, error) {
	c, err := c.Checked()
	if err != nil {
		return db.Conversation{}, fmt.Errorf("ensure %w", err)
	}
	if err := insertConversation(ctx, s.pool, c, s.now()); err != nil {
		return db.Conversation{}, err
	}
	var out db.Conversation
	err = s.pool.QueryRow(ctx, `SELECT `+conversationColumns+` FROM conversations WHERE id = $1`, c.ID).
		Scan(&out.ID, &out.Platform, &out.ChannelID, &out.ThreadID, &out.ParentID, &out.CreatedAt)
	if err != nil {
		return db.Conversation{}, fmt.Errorf("ensure conversation %s: %w", c.ID, translate(err))
	}
	out.CreatedAt = out.CreatedAt.UTC()
	return out, nil
}

// GetSession returns the session stored for a conversation (runID and nodeID empty) or a run's node.
func (s *Store) GetSession(ctx context.Context, conversationID, runID, nodeID string) (db.Session, error) {
	out := db.Session{ConversationID: conversationID, RunID: runID, NodeID: nodeID}
	err := s.pool.QueryRow(ctx, `SELECT provider, COALESCE(session_id, ''), updated_at FROM sessions
		WHERE conversation_id = $1 AND run_id = $2 AND node_id = $3`, conversationID, runID, nodeID).
		Scan(&out.Provider, &out.SessionID, &out.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return db.Session{}, fmt.Errorf("session of %q/%q/%q: %w", conversationID, runID, nodeID, db.ErrNotFound)
	}
	if err != nil {
		return db.Session{}, translate(err)
	}
	out.UpdatedAt = out.UpdatedAt.UTC()
	return out, nil
}

// SetSession stores s; an empty SessionID is stored as NULL, meaning the next turn starts fresh.
func (s *Store) SetSession(ctx context.Context, sess db.Session) error {
	if sess.Provider == "" {
		return errors.New("set session: the provider is required")
	}
	_, err := s.pool.Exec(ctx, `INSERT INTO sessions (conversation_id, run_id, node_id, provider, session_id, updated_at)
		VALUES ($1, $2, $3, $4, NULLIF($5, ''), $6)
		ON CONFLICT (conversation_id, run_id, node_id)
		DO UPDATE SET provider = EXCLUDED.provider, session_id = EXCLUDED.session_id, updated_at = EXCLUDED.updated_at`,
		sess.ConversationID, sess.RunID, sess.NodeID, sess.Provider, sess.SessionID, s.now())
	if err != nil {
		return fmt.Errorf("set session: %w", translate(err))
	}
	return nil
}

// SetMessageRef records (or, with an empty MessageID, forgets) one message of a run.
func (s *Store) SetMessageRef(ctx context.Context, ref db.MessageRef) error {
	return setMessageRef(ctx, s.pool, ref)
}

func setMessageRef(ctx context.Context, x execer, ref db.MessageRef) error {
	q, args := messageRefSQL(ref)
	_, err := x.Exec(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("set %s message of run %s: %w", ref.Kind, ref.RunID, translate(err))
	}
	return nil
}

// MessageRefs returns the messages recorded for a run, by kind.
func (s *Store) MessageRefs(ctx context.Context, runID string) ([]db.MessageRef, error) {
	rows, err := s.pool.Query(ctx, `SELECT kind, platform, channel_id, thread_id, message_id FROM run_messages
		WHERE run_id = $1 ORDER BY kind`, runID)
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

// messageRefSQL is the statement recording ref, or forgetting it when its MessageID is empty.
func messageRefSQL(ref db.MessageRef) (string, []any) {
	if ref.MessageID == "" {
		return `DELETE FROM run_messages WHERE run_id = $1 AND kind = $2`, []any{ref.RunID, ref.Kind}
	}
	return `INSERT INTO run_messages (run_id, kind, platform, channel_id, thread_id, message_id)
		VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (run_id, kind) DO UPDATE SET platform = EXCLUDED.platform,
		channel_id = EXCLUDED.channel_id, thread_id = EXCLUDED.thread_id, message_id = EXCLUDED.message_id`,
		[]any{ref.RunID, ref.Kind, ref.Platform, ref.ChannelID, ref.ThreadID, ref.MessageID}
}
