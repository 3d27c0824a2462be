package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"threadflow/db"
)

// transcriptColumns are read by scanMessage, in its order.
const transcriptColumns = `seq, conversation_id, platform, channel_id, thread_id, message_id, run_id, from_user, to_user,
	text, body, posted_at, edited_at`

// AppendMessage adds m to its conversation's transcript, or edits the row of a message recorded
// already, and deletes the conversation's messages beyond db.TranscriptKeep. Readers in this
// process are woken after the commit: one process writes a SQLite file.
func (s *Store) AppendMessage(ctx context.Context, m db.TranscriptMessage) (db.TranscriptMessage, error) {
	out, _, err := s.appendMessage(ctx, m, `DO UPDATE SET seq = excluded.seq, text = excluded.text,
			body = excluded.body, edited_at = excluded.posted_at`)
	return out, err
}

// AppendMessageOnce adds m unless its message is recorded already; then it returns that row as
// it is and false.
func (s *Store) AppendMessageOnce(ctx context.Context, m db.TranscriptMessage) (db.TranscriptMessage, bool, error) {
	return s.appendMessage(ctx, m, `DO NOTHING`)
}

// appendMessage inserts m with onConflict deciding what a message recorded already becomes, and
// reports whether the statement wrote a row (a DO NOTHING conflict writes none: nothing is trimmed
// and nobody is woken).
func (s *Store) appendMessage(ctx context.Context, m db.TranscriptMessage, onConflict string) (db.TranscriptMessage, bool, error) {
	m, err := m.Bounded()
	if err != nil {
		return db.TranscriptMessage{}, false, err
	}
	if m.PostedAt.IsZero() {
		m.PostedAt = s.clock()
	}
	var (
		out     db.TranscriptMessage
		written bool
	)
	err = s.write(ctx, func(tx *wtx) error {
		seq, err := nextSeq(ctx, tx)
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO transcript_messages (seq, conversation_id, platform, channel_id, thread_id,
			message_id, run_id, from_user, to_user, text, body, posted_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (platform, channel_id, message_id) `+onConflict,
			seq, m.ConversationID, m.Platform, m.ChannelID, m.ThreadID, m.MessageID, m.RunID, m.From, m.ToUser, m.Text,
			string(m.Body), micros(m.PostedAt))
		if err != nil {
			return fmt.Errorf("record message %s: %w", m.MessageID, translate(err))
		}
		n, err := res.RowsAffected()
		if err != nil {
			return fmt.Errorf("record message %s: %w", m.MessageID, translate(err))
		}
		if written = n > 0; written {
			if _, err := tx.ExecContext(ctx, `DELETE FROM transcript_messages WHERE conversation_id = ? AND id < (
				SELECT id FROM transcript_messages WHERE conversation_id = ? ORDER BY id DESC LIMIT 1 OFFSET ?)`,
				m.ConversationID, m.ConversationID, db.TranscriptKeep-1); err != nil {
				return fmt.Errorf("trim transcript %s: %w", m.ConversationID, translate(err))
			}
		}
		out, err = readMessage(ctx, tx, m)
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

// FindMessage returns the recorded message (platform, channel, message id), or db.ErrNotFound.
func (s *Store) FindMessage(ctx context.Context, platform, channelID, messageID string) (db.TranscriptMessage, error) {
	out, err := scanMessage(s.r.QueryRowContext(ctx, `SELECT `+transcriptColumns+` FROM transcript_messages
		WHERE platform = ? AND channel_id = ? AND message_id = ?`, platform, channelID, messageID))
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
		seq, err := nextSeq(ctx, tx)
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `UPDATE transcript_messages SET seq = ?, text = ?, body = ?, edited_at = ?,
			run_id = CASE WHEN ? <> '' THEN ? ELSE run_id END, to_user = CASE WHEN ? <> '' THEN ? ELSE to_user END
			WHERE platform = ? AND channel_id = ? AND message_id = ?`,
			seq, m.Text, string(m.Body), micros(s.clock()), m.RunID, m.RunID, m.ToUser, m.ToUser, m.Platform, m.ChannelID, m.MessageID)
		if err != nil {
			return fmt.Errorf("edit message %s: %w", m.MessageID, translate(err))
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return fmt.Errorf("edit message %s of %s %s: %w", m.MessageID, m.Platform, m.ChannelID, db.ErrNotFound)
		}
		out, err = readMessage(ctx, tx, m)
		return err
	})
	if err != nil {
		return db.TranscriptMessage{}, err
	}
	s.changes.Notify(out.ConversationID)
	return out, nil
}

// Transcript returns the newest limit messages of a conversation, oldest first.
func (s *Store) Transcript(ctx context.Context, conversationID string, limit int) ([]db.TranscriptMessage, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT `+transcriptColumns+` FROM (SELECT * FROM transcript_messages
		WHERE conversation_id = ? ORDER BY id DESC LIMIT ?) ORDER BY id`, conversationID, limit)
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

// TranscriptChanged returns a channel closed at the conversation's next recorded change.
func (s *Store) TranscriptChanged(conversationID string) <-chan struct{} {
	return s.changes.Wait(conversationID)
}

// nextSeq is the transcript's next seq: the single writer holds the write lock, so MAX + 1 is
// unique and larger than every committed seq.
func nextSeq(ctx context.Context, tx *wtx) (int64, error) {
	var seq int64
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(seq), 0) + 1 FROM transcript_messages`).Scan(&seq); err != nil {
		return 0, fmt.Errorf("next transcript seq: %w", translate(err))
	}
	return seq, nil
}

func readMessage(ctx context.Context, tx *wtx, m db.TranscriptMessage) (db.TranscriptMessage, error) {
	out, err := scanMessage(tx.QueryRowContext(ctx, `SELECT `+transcriptColumns+` FROM transcript_messages
		WHERE platform = ? AND channel_id = ? AND message_id = ?`, m.Platform, m.ChannelID, m.MessageID))
	if errors.Is(err, db.ErrNotFound) {
		return out, fmt.Errorf("read back message %s: %w", m.MessageID, err)
	}
	return out, err
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
