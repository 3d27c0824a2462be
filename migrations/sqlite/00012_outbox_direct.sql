-- +goose Up
-- Gates notify people (issue 29): a run may owe a direct message (target 'direct': a message sent
-- to each person it names, in their DMs, instead of the run's thread), and a gate may escalate to
-- more people at a time of its own, found due like its timeout and reminder. SQLite cannot change
-- a CHECK, so run_outbox is rebuilt with the wider one (nothing references it; ids, and with them
-- AUTOINCREMENT's next id, are kept).
CREATE TABLE run_outbox_new (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id          TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    kind            TEXT NOT NULL,
    key             TEXT NOT NULL,
    target          TEXT NOT NULL CHECK (target IN ('open', 'thread', 'live', 'edit', 'direct')),
    ref_kind        TEXT NOT NULL DEFAULT '',
    reply           TEXT NOT NULL CHECK (json_valid(reply)),
    state           TEXT NOT NULL DEFAULT 'owed' CHECK (state IN ('owed', 'sent', 'failed')),
    version         INTEGER NOT NULL DEFAULT 1,
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL,
    last_error      TEXT NOT NULL DEFAULT '',
    claim_owner     TEXT NOT NULL DEFAULT '',
    claim_until     INTEGER NULL,
    created_at      INTEGER NOT NULL,
    sent_at         INTEGER NULL,
    message_id      TEXT NOT NULL DEFAULT '',
    UNIQUE (run_id, key)
);
INSERT INTO run_outbox_new (id, run_id, kind, key, target, ref_kind, reply, state, version, attempts, next_attempt_at,
    last_error, claim_owner, claim_until, created_at, sent_at, message_id)
SELECT id, run_id, kind, key, target, ref_kind, reply, state, version, attempts, next_attempt_at,
    last_error, claim_owner, claim_until, created_at, sent_at, message_id FROM run_outbox;
DROP TABLE run_outbox;
ALTER TABLE run_outbox_new RENAME TO run_outbox;
CREATE INDEX run_outbox_owed ON run_outbox (run_id, id) WHERE state = 'owed';
ALTER TABLE runs ADD COLUMN gate_escalate_at INTEGER NULL;
CREATE INDEX runs_gate_escalate ON runs (gate_escalate_at) WHERE gate_escalate_at IS NOT NULL;

-- +goose Down
DROP INDEX runs_gate_escalate;
ALTER TABLE runs DROP COLUMN gate_escalate_at;
DELETE FROM run_outbox WHERE target = 'direct';
CREATE TABLE run_outbox_old (
    id              INTEGER PRIMARY KEY AUTOINCREMENT,
    run_id          TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    kind            TEXT NOT NULL,
    key             TEXT NOT NULL,
    target          TEXT NOT NULL CHECK (target IN ('open', 'thread', 'live', 'edit')),
    ref_kind        TEXT NOT NULL DEFAULT '',
    reply           TEXT NOT NULL CHECK (json_valid(reply)),
    state           TEXT NOT NULL DEFAULT 'owed' CHECK (state IN ('owed', 'sent', 'failed')),
    version         INTEGER NOT NULL DEFAULT 1,
    attempts        INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER NOT NULL,
    last_error      TEXT NOT NULL DEFAULT '',
    claim_owner     TEXT NOT NULL DEFAULT '',
    claim_until     INTEGER NULL,
    created_at      INTEGER NOT NULL,
    sent_at         INTEGER NULL,
    message_id      TEXT NOT NULL DEFAULT '',
    UNIQUE (run_id, key)
);
INSERT INTO run_outbox_old SELECT * FROM run_outbox;
DROP TABLE run_outbox;
ALTER TABLE run_outbox_old RENAME TO run_outbox;
CREATE INDEX run_outbox_owed ON run_outbox (run_id, id) WHERE state = 'owed';
