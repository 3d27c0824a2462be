-- +goose Up
-- run_outbox holds every chat message a run owes (its announcement, status edits, gate questions,
-- reminders, notices, final message), written in the same transaction as the state change that
-- owes it and delivered by a courier in whichever process can reach the run's platform. A row is
-- owed until it is sent, or failed after its bounded retries. id orders a run's messages.
CREATE TABLE run_outbox (
    id              BIGSERIAL PRIMARY KEY,
    run_id          TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    kind            TEXT NOT NULL,
    key             TEXT NOT NULL,
    target          TEXT NOT NULL CHECK (target IN ('open', 'thread', 'live', 'edit')),
    ref_kind        TEXT NOT NULL DEFAULT '',
    reply           JSONB NOT NULL,
    state           TEXT NOT NULL DEFAULT 'owed' CHECK (state IN ('owed', 'sent', 'failed')),
    version         INTEGER NOT NULL DEFAULT 1,
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at TIMESTAMPTZ NOT NULL,
    last_error      TEXT NOT NULL DEFAULT '',
    claim_owner     TEXT NOT NULL DEFAULT '',
    claim_until     TIMESTAMPTZ NULL,
    created_at      TIMESTAMPTZ NOT NULL,
    sent_at         TIMESTAMPTZ NULL,
    message_id      TEXT NOT NULL DEFAULT '',
    UNIQUE (run_id, key)
);

-- The courier's look-up: the owed rows, each run's in order.
CREATE INDEX run_outbox_owed ON run_outbox (run_id, id) WHERE state = 'owed';

-- +goose Down
DROP TABLE run_outbox;
