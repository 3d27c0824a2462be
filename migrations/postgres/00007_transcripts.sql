-- +goose Up
-- transcript_messages is every conversation's transcript: each message the bot posted on any
-- platform (with the platform's message id, so an edit in place updates its row) and what web chat
-- users typed. The web chat page renders from it, so any replica shows any user's page and a restart
-- loses nothing. seq takes a fresh value from transcript_seq on every insert and edit: a page that
-- saw the conversation at seq s re-reads it when a larger seq appears. Each conversation keeps its
-- newest messages only (db.TranscriptKeep); older rows are deleted as new ones arrive.
CREATE SEQUENCE transcript_seq;
CREATE TABLE transcript_messages (
	id              BIGSERIAL PRIMARY KEY,
	seq             BIGINT NOT NULL DEFAULT nextval('transcript_seq'),
	conversation_id TEXT NOT NULL,
	platform        TEXT NOT NULL,
	channel_id      TEXT NOT NULL,
	thread_id       TEXT NOT NULL DEFAULT '',
	message_id      TEXT NOT NULL,
	run_id          TEXT NOT NULL DEFAULT '',
	from_user       TEXT NOT NULL DEFAULT '',
	to_user         TEXT NOT NULL DEFAULT '',
	text            TEXT NOT NULL,
	body            TEXT NOT NULL DEFAULT '',
	posted_at       TIMESTAMPTZ NOT NULL,
	edited_at       TIMESTAMPTZ NULL,
	UNIQUE (platform, channel_id, message_id)
);
CREATE INDEX transcript_messages_conversation ON transcript_messages (conversation_id, id);
CREATE INDEX transcript_messages_run ON transcript_messages (run_id) WHERE run_id <> '';

-- +goose Down
DROP TABLE transcript_messages;
DROP SEQUENCE transcript_seq;
