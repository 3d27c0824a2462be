package db

// The transcripts' statements: a message recorded once per (platform, channel, message id), edits
// with a fresh seq, and each conversation trimmed to its newest TranscriptKeep messages.

import (
	"errors"
	"fmt"
	"strings"
	"time"
)

// TranscriptColumns is the column list every transcript query selects or returns, in the engines'
// scanMessage order.
const TranscriptColumns = `seq, conversation_id, platform, channel_id, thread_id, message_id, run_id, from_user, to_user,
	text, body, posted_at, edited_at`

// AppendMessage inserts m (Store.AppendMessage) returning the stored message. A message recorded
// already (its platform, channel and message id) is edited (text and body replaced, a fresh seq,
// edited at m's time) unless once is set; then nothing is written and nothing returned.
func (d Dialect) AppendMessage(m TranscriptMessage, once bool) (string, []any) {
	q := d.Query()
	values := []string{d.MessageSeq, q.Arg(m.ConversationID), q.Arg(m.Platform), q.Arg(m.ChannelID), q.Arg(m.ThreadID),
		q.Arg(m.MessageID), q.Arg(m.RunID), q.Arg(m.From), q.Arg(m.ToUser), q.Arg(m.Text), q.Arg(string(m.Body)), q.Time(m.PostedAt)}
	conflict := "DO UPDATE SET seq = " + d.MessageSeq + ", text = excluded.text, body = excluded.body, edited_at = excluded.posted_at"
	if once {
		conflict = "DO NOTHING"
	}
	return `INSERT INTO transcript_messages (seq, conversation_id, platform, channel_id, thread_id, message_id, run_id, from_user,
		to_user, text, body, posted_at) VALUES (` + strings.Join(values, ", ") + `)
		ON CONFLICT (platform, channel_id, message_id) ` + conflict + " RETURNING " + TranscriptColumns, q.Args
}

// TrimTranscript deletes the conversation's messages beyond its newest TranscriptKeep.
func (d Dialect) TrimTranscript(conversationID string) (string, []any) {
	q := d.Query() // each parameter is written once: "?" takes its value by position
	return `DELETE FROM transcript_messages WHERE conversation_id = ` + q.Arg(conversationID) + ` AND id < (
		SELECT id FROM transcript_messages WHERE conversation_id = ` + q.Arg(conversationID) + ` ORDER BY id DESC LIMIT 1 OFFSET ` +
		q.Arg(TranscriptKeep-1) + ")", q.Args
}

// EditMessage replaces a recorded message's text and body at now, with a fresh seq; its run and
// addressee are kept unless m names them (Store.EditMessage). It returns the message; no row when
// the message is not recorded.
func (d Dialect) EditMessage(m TranscriptMessage, now time.Time) (string, []any) {
	q := d.Query()
	keep := func(col, v string) string {
		return col + " = CASE WHEN " + q.Arg(v) + " <> '' THEN " + q.Arg(v) + " ELSE " + col + " END"
	}
	set := "seq = " + d.MessageSeq + ", text = " + q.Arg(m.Text) + ", body = " + q.Arg(string(m.Body)) + ", edited_at = " +
		q.Time(now) + ", " + keep("run_id", m.RunID) + ", " + keep("to_user", m.ToUser)
	return "UPDATE transcript_messages SET " + set + " WHERE " + q.messageIs(m.Platform, m.ChannelID, m.MessageID) +
		" RETURNING " + TranscriptColumns, q.Args
}

// FindMessage selects the recorded message (platform, channel, message id).
func (d Dialect) FindMessage(platform, channelID, messageID string) (string, []any) {
	q := d.Query()
	return "SELECT " + TranscriptColumns + " FROM transcript_messages WHERE " + q.messageIs(platform, channelID, messageID), q.Args
}

func (q *SQL) messageIs(platform, channelID, messageID string) string {
	return "platform = " + q.Arg(platform) + " AND channel_id = " + q.Arg(channelID) + " AND message_id = " + q.Arg(messageID)
}

// Transcript selects the conversation's newest limit messages, oldest first (Store.Transcript).
func (d Dialect) Transcript(conversationID string, limit int) (string, []any) {
	q := d.Query()
	return "SELECT " + TranscriptColumns + ` FROM (SELECT * FROM transcript_messages WHERE conversation_id = ` +
		q.Arg(conversationID) + " ORDER BY id DESC LIMIT " + q.Arg(limit) + ") newest ORDER BY id", q.Args
}

// MessageTx is what recording a message needs of an engine's transaction: a statement returning
// one message (ErrNotFound when it returns none), and one returning nothing.
type MessageTx struct {
	Row  func(query string, args []any) (TranscriptMessage, error)
	Exec func(query string, args []any) error
}

// RecordMessage records m in tx as Store.AppendMessage does, or AppendMessageOnce with once: m is
// bounded (TranscriptMessage.Bounded) and posted at now unless it says when, a message recorded
// already is edited, or with once returned as stored and not written, and a written message trims
// its conversation to TranscriptKeep. written tells the engine to wake the transcript's readers.
func (d Dialect) RecordMessage(tx MessageTx, m TranscriptMessage, once bool, now time.Time) (out TranscriptMessage, written bool, err error) {
	if m, err = m.Bounded(); err != nil {
		return TranscriptMessage{}, false, err
	}
	if m.PostedAt.IsZero() {
		m.PostedAt = now
	}
	q, args := d.AppendMessage(m, once)
	out, err = tx.Row(q, args)
	if errors.Is(err, ErrNotFound) { // once, and the message is recorded already
		q, args = d.FindMessage(m.Platform, m.ChannelID, m.MessageID)
		out, err = tx.Row(q, args)
		return out, false, err
	}
	if err != nil {
		return TranscriptMessage{}, false, fmt.Errorf("record message %s: %w", m.MessageID, err)
	}
	q, args = d.TrimTranscript(m.ConversationID)
	if err := tx.Exec(q, args); err != nil {
		return TranscriptMessage{}, false, fmt.Errorf("trim transcript %s: %w", m.ConversationID, err)
	}
	return out, true, nil
}
