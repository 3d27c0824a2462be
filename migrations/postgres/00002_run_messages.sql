-- +goose Up
-- run_messages remembers which chat messages belong to a run (its live status message, the gate
-- question waiting for an answer), so any replica, also after a restart, can edit them.
CREATE TABLE run_messages (
	run_id     TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE,
	kind       TEXT NOT NULL,
	platform   TEXT NOT NULL,
	channel_id TEXT NOT NULL,
	thread_id  TEXT NOT NULL DEFAULT '',
	message_id TEXT NOT NULL,
	PRIMARY KEY (run_id, kind)
);

-- +goose Down
DROP TABLE run_messages;
