package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"threadflow/db"
)

// transcriptChannel is the NOTIFY channel of transcript changes; the payload is the conversation
// id (short: conversation keys are bounded by db.TranscriptIDBytes, far below NOTIFY's 8000 bytes).
const transcriptChannel = "threadflow_transcript"

// transcriptColumns are read by scanMessage, in its order.
const transcriptColumns = `seq, conversation_id, platform, channel_id, thread_id, message_id, run_id, from_user, to_user,
	text, body, posted_at, edited_at`

// AppendMessage adds m to its conversation's transcript, or edits the row of a message recorded
// already, deletes the conversation's messages beyond db.TranscriptKeep, and notifies every
// replica's listener when the transaction commits.
func (s *Store) AppendMessage(ctx context.Context, m db.TranscriptMessage) (db.TranscriptMessage, error) {
	out, _, err := s.appendMessage(ctx, m, `DO UPDATE SET seq = nextval('transcript_seq'), text = EXCLUDED.text,
			body = EXCLUDED.body, edited_at = EXCLUDED.posted_at`)
	return out, err
}

// AppendMessageOnce adds m unless its message is recorded already; then it returns that row as
// it is and false. Of two replicas inserting the same message at once, the second waits for the
// first to commit, inserts nothing and reads the first one's row.
func (s *Store) AppendMessageOnce(ctx context.Context, m db.TranscriptMessage) (db.TranscriptMessage, bool, error) {
	return s.appendMessage(ctx, m, `DO NOTHING`)
}

// appendMessage inserts m with onConflict deciding what a message recorded already becomes, and
// reports whether the statement wrote a row (a DO NOTHING conflict returns none: the recorded row
// is read instead, nothing is trimmed and nobody is notified).
func (s *Store) appendMessage(ctx context.Context, m db.TranscriptMessage, onConflict string) (db.TranscriptMessage, bool, error) {
	m, err := m.Bounded()
	if err != nil {
		return db.TranscriptMessage{}, false, err
	}
	if m.PostedAt.IsZero() {
		m.PostedAt = s.now()
	}
	var (
		out     db.TranscriptMessage
		written bool
	)
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		out, err = scanMessage(tx.QueryRow(ctx, `INSERT INTO transcript_messages (conversation_id, platform, channel_id, thread_id,
			message_id, run_id, from_user, to_user, text, body, posted_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
			ON CONFLICT (platform, channel_id, message_id) `+onConflict+`
			RETURNING `+transcriptColumns,
			m.ConversationID, m.Platform, m.ChannelID, m.ThreadID, m.MessageID, m.RunID, m.From, m.ToUser, m.Text,
			string(m.Body), m.PostedAt))
		if errors.Is(err, db.ErrNotFound) { // DO NOTHING: the message is recorded already
			out, err = findMessage(ctx, tx, m.Platform, m.ChannelID, m.MessageID)
			return err
		}
		if err != nil {
			return fmt.Errorf("record message %s: %w", m.MessageID, err)
		}
		written = true
		if _, err := tx.Exec(ctx, `DELETE FROM transcript_messages WHERE conversation_id = $1 AND id < (
			SELECT id FROM transcript_messages WHERE conversation_id = $1 ORDER BY id DESC LIMIT 1 OFFSET $2)`,
			m.ConversationID, db.TranscriptKeep-1); err != nil {
			return fmt.Errorf("trim transcript %s: %w", m.ConversationID, err)
		}
		return notifyTranscript(ctx, tx, out.ConversationID)
	})
	if err != nil {
		return db.TranscriptMessage{}, false, translate(err)
	}
	return out, written, nil
}

// FindMessage returns the recorded message (platform, channel, message id), or db.ErrNotFound.
func (s *Store) FindMessage(ctx context.Context, platform, channelID, messageID string) (db.TranscriptMessage, error) {
	return findMessage(ctx, s.pool, platform, channelID, messageID)
}

// rowQuerier is what findMessage reads with: the pool, or a transaction.
type rowQuerier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

func findMessage(ctx context.Context, q rowQuerier, platform, channelID, messageID string) (db.TranscriptMessage, error) {
	out, err := scanMessage(q.QueryRow(ctx, `SELECT `+transcriptColumns+` FROM transcript_messages
		WHERE platform = $1 AND channel_id = $2 AND message_id = $3`, platform, channelID, messageID))
	if err != nil {
		return db.TranscriptMessage{}, fmt.Errorf("find message %s of %s %s: %w", messageID, platform, channelID, err)
	}
	return out, nil
}

// EditMessage replaces a recorded message's text and body; db.ErrNotFound if it is not recorded.
func (s *Store) EditMessage(ctx context.Context, m db.TranscriptMessage) (db.TranscriptMessage, error) {
	m, err := m.Bounded()
	if err != nil {
		return db.TranscriptMessage{}, err
	}
	var out db.TranscriptMessage
	err = s.inTx(ctx, func(tx pgx.Tx) error {
		out, err = scanMessage(tx.QueryRow(ctx, `UPDATE transcript_messages SET seq = nextval('transcript_seq'), text = $1,
			body = $2, edited_at = $3, run_id = CASE WHEN $4 <> '' THEN $4 ELSE run_id END,
			to_user = CASE WHEN $5 <> '' THEN $5 ELSE to_user END
			WHERE platform = $6 AND channel_id = $7 AND message_id = $8 RETURNING `+transcriptColumns,
			m.Text, string(m.Body), s.now(), m.RunID, m.ToUser, m.Platform, m.ChannelID, m.MessageID))
		if errors.Is(err, db.ErrNotFound) {
			return fmt.Errorf("edit message %s of %s %s: %w", m.MessageID, m.Platform, m.ChannelID, err)
		}
		if err != nil {
			return fmt.Errorf("edit message %s: %w", m.MessageID, err)
		}
		return notifyTranscript(ctx, tx, out.ConversationID)
	})
	if err != nil {
		return db.TranscriptMessage{}, translate(err)
	}
	return out, nil
}

// Transcript returns the newest limit messages of a conversation, oldest first.
func (s *Store) Transcript(ctx context.Context, conversationID string, limit int) ([]db.TranscriptMessage, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+transcriptColumns+` FROM (SELECT * FROM transcript_messages
		WHERE conversation_id = $1 ORDER BY id DESC LIMIT $2) newest ORDER BY id`, conversationID, limit)
	if err != nil {
		return nil, fmt.Errorf("read transcript %s: %w", conversationID, translate(err))
	}
	defer rows.Close()
	var out []db.TranscriptMessage
	for rows.Next() {
		m, err := scanMessage(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, translate(rows.Err())
}

// TranscriptChanged returns a channel closed at the conversation's next change by any replica. The
// first call starts the listener (a dedicated connection), so stores that never render a
// transcript (migrate, the workflow commands) hold no extra connection.
func (s *Store) TranscriptChanged(conversationID string) <-chan struct{} {
	ch := s.changes.Wait(conversationID) // before the listener starts: its first connect wakes it
	s.listenOnce.Do(s.startListener)
	return ch
}

// notifyTranscript queues the NOTIFY; PostgreSQL delivers it when the transaction commits, and not
// at all when it rolls back.
func notifyTranscript(ctx context.Context, tx pgx.Tx, conversationID string) error {
	if _, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, transcriptChannel, conversationID); err != nil {
		return fmt.Errorf("notify transcript change: %w", err)
	}
	return nil
}

func scanMessage(row pgx.Row) (db.TranscriptMessage, error) {
	var (
		m      db.TranscriptMessage
		body   string
		edited *time.Time
	)
	err := row.Scan(&m.Seq, &m.ConversationID, &m.Platform, &m.ChannelID, &m.ThreadID, &m.MessageID, &m.RunID, &m.From,
		&m.ToUser, &m.Text, &body, &m.PostedAt, &edited)
	if err != nil {
		return db.TranscriptMessage{}, translate(err)
	}
	if body != "" {
		m.Body = []byte(body)
	}
	m.PostedAt = m.PostedAt.UTC()
	if edited != nil {
		m.EditedAt = edited.UTC()
	}
	return m, nil
}
