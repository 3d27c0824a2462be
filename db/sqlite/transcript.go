package sqlite

import (
	"context"
	"database/sql"
	"fmt"

	"threadflow/db"
)

// AppendMessage adds m to its conversation's transcript, or edits the row of a message recorded
// already, and deletes the conversation's messages beyond db.TranscriptKeep. Readers in this
// process are woken after the commit: one process writes a SQLite file.
func (s *Store) AppendMessage(ctx context.Context, m db.TranscriptMessage) (db.TranscriptMessage, error) {
	out, _, err := s.appendMessage(ctx, m, false)
	return out, err
}

// AppendMessageOnce adds m unless its message is recorded already; then it returns that row as
// it is and false.
func (s *Store) AppendMessageOnce(ctx context.Context, m db.TranscriptMessage) (db.TranscriptMessage, bool, error) {
	return s.appendMessage(ctx, m, true)
}

// appendMessage inserts m, or edits the message recorded already unless once is set, and reports
// whether it wrote a row (a message recorded already and once: nothing is trimmed and nobody is
// woken).
func (s *Store) appendMessage(ctx context.Context, m db.TranscriptMessage, once bool) (db.TranscriptMessage, bool, error) {
	var (
		out     db.TranscriptMessage
		written bool
	)
	// What a person typed (From set: the web chat records it before handing the message on) is
	// written while their request waits, like an inbound message's record: it goes ahead of the
	// queued writes of the runs in progress, which would otherwise hold it past RecordTimeout under
	// a burst (51 runs started at once).
	err := s.writeTx(ctx, m.From != "", func(tx *wtx) error {
		var err error
		out, written, err = dialect.RecordMessage(messageTx(ctx, tx), m, once, s.clock())
		return err
	})
	if err != nil {
		return db.TranscriptMessage{}, false, err
	}
	if written {
		s.changes.Notify(out.ConversationID)
	}
	return out, written, nil
}

// messageTx runs db.RecordMessage's statements in tx.
func messageTx(ctx context.Context, tx *wtx) db.MessageTx {
	return db.MessageTx{
		Row: func(q string, args []any) (db.TranscriptMessage, error) {
			return scanMessage(tx.QueryRowContext(ctx, q, args...))
		},
		Exec: func(q string, args []any) error {
			_, err := tx.ExecContext(ctx, q, args...)
			return translate(err)
		},
	}
}

// FindMessage returns the recorded message (platform, channel, message id), or db.ErrNotFound.
func (s *Store) FindMessage(ctx context.Context, platform, channelID, messageID string) (db.TranscriptMessage, error) {
	q, args := dialect.FindMessage(platform, channelID, messageID)
	out, err := scanMessage(s.r.QueryRowContext(ctx, q, args...))
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
	err = s.write(ctx, func(tx *wtx) error {
		q, args := dialect.EditMessage(m, s.clock())
		out, err = scanMessage(tx.QueryRowContext(ctx, q, args...))
		if isNotFound(err) {
			return fmt.Errorf("edit message %s of %s %s: %w", m.MessageID, m.Platform, m.ChannelID, db.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("edit message %s: %w", m.MessageID, err)
		}
		return nil
	})
	if err != nil {
		return db.TranscriptMessage{}, err
	}
	s.changes.Notify(out.ConversationID)
	return out, nil
}

// Transcript returns the newest limit messages of a conversation, oldest first.
func (s *Store) Transcript(ctx context.Context, conversationID string, limit int) ([]db.TranscriptMessage, error) {
	q, args := dialect.Transcript(conversationID, limit)
	out, err := queryAll(ctx, s.r, q, args, scanMessage)
	if err != nil {
		return nil, fmt.Errorf("read transcript %s: %w", conversationID, err)
	}
	return out, nil
}

// TranscriptChanged returns a channel closed at the conversation's next recorded change.
func (s *Store) TranscriptChanged(conversationID string) <-chan struct{} {
	return s.changes.Wait(conversationID)
}

func scanMessage(row scanner) (db.TranscriptMessage, error) {
	var (
		m      db.TranscriptMessage
		body   string
		posted int64
		edited sql.NullInt64
	)
	err := row.Scan(&m.Seq, &m.ConversationID, &m.Platform, &m.ChannelID, &m.ThreadID, &m.MessageID, &m.RunID, &m.From,
		&m.ToUser, &m.Text, &body, &posted, &edited)
	if err != nil {
		return db.TranscriptMessage{}, translate(err)
	}
	if body != "" {
		m.Body = []byte(body)
	}
	m.PostedAt, m.EditedAt = fromMicros(posted), fromNull(edited)
	return m, nil
}
