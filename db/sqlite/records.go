package sqlite

import (
	"context"
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
		var created int64
		q, args := dialect.Conversation(c.ID)
		err = tx.QueryRowContext(ctx, q, args...).Scan(&out.ID, &out.Platform, &out.ChannelID, &out.ThreadID, &out.ParentID, &created)
		if err != nil {
			return fmt.Errorf("ensure conversation %s: %w", c.ID, translate(err))
		}
		out.CreatedAt = fromMicros(created)
		return nil
	})
	return out, err
}

// insertConversation records c unless its id is known already.
func insertConversation(ctx context.Context, tx *wtx, c db.Conversation, now time.Time) error {
	q, args := dialect.InsertConversation(c, now)
	_, err := tx.ExecContext(ctx, q, args...)
	if err != nil {
		return fmt.Errorf("ensure conversation %s: %w", c.ID, translate(err))
	}
	return nil
}

// GetSession returns the session stored under (conversation, run, node), or db.ErrNotFound.
func (s *Store) GetSession(ctx context.Context, conversationID, runID, nodeID string) (db.Session, error) {
	out := db.Session{ConversationID: conversationID, RunID: runID, NodeID: nodeID}
	var updated int64
	q, args := dialect.Session(conversationID, runID, nodeID)
	err := s.r.QueryRowContext(ctx, q, args...).Scan(&out.Provider, &out.SessionID, &updated)
	if err != nil {
		return db.Session{}, fmt.Errorf("get session: %w", translate(err))
	}
	out.UpdatedAt = fromMicros(updated)
	return out, nil
}

// SetSession stores s; an empty SessionID is stored as NULL, meaning the next turn starts fresh.
func (s *Store) SetSession(ctx context.Context, sess db.Session) error {
	if err := sess.Check(); err != nil {
		return err
	}
	return s.write(ctx, func(tx *wtx) error {
		q, args := dialect.SetSession(sess, s.clock())
		if _, err := tx.ExecContext(ctx, q, args...); err != nil {
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
	q, args := dialect.SetMessageRef(ref)
	if _, err := tx.ExecContext(ctx, q, args...); err != nil {
		return fmt.Errorf("set %s message of run %s: %w", ref.Kind, ref.RunID, translate(err))
	}
	return nil
}

// MessageRefs returns the messages recorded for a run, by kind.
func (s *Store) MessageRefs(ctx context.Context, runID string) ([]db.MessageRef, error) {
	q, args := dialect.MessageRefs(runID)
	out, err := queryAll(ctx, s.r, q, args, func(row scanner) (db.MessageRef, error) {
		ref := db.MessageRef{RunID: runID}
		err := row.Scan(&ref.Kind, &ref.Platform, &ref.ChannelID, &ref.ThreadID, &ref.MessageID)
		return ref, translate(err)
	})
	if err != nil {
		return nil, fmt.Errorf("read messages of run %s: %w", runID, err)
	}
	return out, nil
}
