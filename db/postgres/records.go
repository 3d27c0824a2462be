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

// insertConversation records c unless its id is known already.
func insertConversation(ctx context.Context, x execer, c db.Conversation, now time.Time) error {
	q, args := dialect.InsertConversation(c, now)
	_, err := x.Exec(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("ensure conversation %s: %w", c.ID, translate(err))
	}
	return nil
}

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
	q, args := dialect.Conversation(c.ID)
	err = s.pool.QueryRow(ctx, q, args...).Scan(&out.ID, &out.Platform, &out.ChannelID, &out.ThreadID, &out.ParentID, &out.CreatedAt)
	if err != nil {
		return db.Conversation{}, fmt.Errorf("ensure conversation %s: %w", c.ID, translate(err))
	}
	out.CreatedAt = out.CreatedAt.UTC()
	return out, nil
}

// GetSession returns the session stored for a conversation (runID and nodeID empty) or a run's node.
func (s *Store) GetSession(ctx context.Context, conversationID, runID, nodeID string) (db.Session, error) {
	out := db.Session{ConversationID: conversationID, RunID: runID, NodeID: nodeID}
	q, args := dialect.Session(conversationID, runID, nodeID)
	err := s.pool.QueryRow(ctx, q, args...).Scan(&out.Provider, &out.SessionID, &out.UpdatedAt)
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
	if err := sess.Check(); err != nil {
		return err
	}
	q, args := dialect.SetSession(sess, s.now())
	if _, err := s.pool.Exec(ctx, q, args...); err != nil {
		return fmt.Errorf("set session: %w", translate(err))
	}
	return nil
}

// SetMessageRef records (or, with an empty MessageID, forgets) one message of a run.
func (s *Store) SetMessageRef(ctx context.Context, ref db.MessageRef) error {
	return setMessageRef(ctx, s.pool, ref)
}

func setMessageRef(ctx context.Context, x execer, ref db.MessageRef) error {
	q, args := dialect.SetMessageRef(ref)
	_, err := x.Exec(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("set %s message of run %s: %w", ref.Kind, ref.RunID, translate(err))
	}
	return nil
}

// MessageRefs returns the messages recorded for a run, by kind.
func (s *Store) MessageRefs(ctx context.Context, runID string) ([]db.MessageRef, error) {
	q, args := dialect.MessageRefs(runID)
	out, err := queryAll(ctx, s.pool, q, args, func(row pgx.Row) (db.MessageRef, error) {
		ref := db.MessageRef{RunID: runID}
		err := row.Scan(&ref.Kind, &ref.Platform, &ref.ChannelID, &ref.ThreadID, &ref.MessageID)
		return ref, err
	})
	if err != nil {
		return nil, fmt.Errorf("read messages of run %s: %w", runID, err)
	}
	return out, nil
}
