-- +goose Up
-- Terminals (`bot chat`, `bot workflow`) attached to a conversation. While a terminal process runs it
-- renews its row, and the runs of that conversation are its own: it executes them and prints what
-- they say. A run of a terminal conversation that no live row covers (the terminal exited, or was
-- killed and its row expired) is executed by a server instead (docs/state-machine.md).
CREATE TABLE terminal_attachments (
    conversation_id TEXT    NOT NULL,
    owner           TEXT    NOT NULL, -- REPLICA_ID of the terminal process
    expires_at      INTEGER NOT NULL,
    PRIMARY KEY (conversation_id, owner)
);

-- +goose Down
DROP TABLE terminal_attachments;
