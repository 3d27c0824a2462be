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

// AppendMessage adds m to its conversation's transcript, or edits the row of a message recorded
// already, deletes the conversation's messages beyond db.TranscriptKeep, and notifies every
// replica's listener when the transaction commits.
func (s *Store) AppendMessage(ctx context.Context, m db.TranscriptMessage) (db.TranscriptMessage, error) {
	out, _, err := s.appendMessage(ctx, m, false)
	return out, err
}

// AppendMessageOnce adds m unless its message is recorded already; then it returns that row as
// it is and false. Of two replicas inserting the same message at once, the second waits for the
// first to commit, inserts nothing and reads the first one's row.
func (s *Store) AppendMessageOnce(ctx context.Context, m db.TranscriptMessage) (db.TranscriptMessage, bool, error) {
	return s.appendMessage(ctx, m, true)
}

// appendMessage inserts m, or edits the message recorded already unless once is set, and reports
// whether it wrote a row (a message recorded already and once: the recorded row is read instead,
// nothing is trimmed and nobody is notified).
func (s *Store) appendMessage(ctx context.Context, m db.TranscriptMessage, once bool) (db.TranscriptMessage, bool, error) {
	var (
		out     db.TranscriptMessage
		written bool
	)
	err := s.inTx(ctx, func(tx pgx.Tx) error {
		var err error
		if out, written, err = dialect.RecordMessage(messageTx(ctx, tx), m, once, s.now()); err != nil || !written {
			return err
		}
		return notifyTranscript(ctx, tx, out.ConversationID)
	})
	if err != nil {
		return db.TranscriptMessage{}, false, translate(err)
	}
	return out, written, nil
}

// messageTx runs db.RecordMessage's statements in tx.
func messageTx(ctx context.Context, tx pgx.Tx) db.MessageTx {
	return db.MessageTx{
		Row: func(q string, args []any) (db.TranscriptMessage, error) {
			return scanMessage(tx.QueryRow(ctx, q, args...))
		},
		Exec: func(q string, args []any) error {
			_, err := tx.Exec(ctx, q, args...)
			return err
		},
	}
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
	query, args := dialect.FindMessage(platform, channelID, messageID)
	out, err := scanMessage(q.QueryRow(ctx, query, args...))
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
		q, args := dialect.EditMessage(m, s.now())
		out, err = scanMessage(tx.QueryRow(ctx, q, args...))
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
	q, args := dialect.Transcript(conversationID, limit)
	out, err := queryAll(ctx, s.pool, q, args, scanMessage)
	if err != nil {
		return nil, fmt.Errorf("read transcript %s: %w", conversationID, err)
	}
	return out, nil
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
