-- Threadflow schema, SQLite flavour. Times are INTEGER unix microseconds UTC, NULL for "not set".
-- JSON columns are TEXT holding a JSON object. The PostgreSQL schema mirrors this one column for column.

-- +goose Up
CREATE TABLE conversations (
    id         TEXT PRIMARY KEY,
    platform   TEXT NOT NULL,
    channel_id TEXT NOT NULL,
    thread_id  TEXT NOT NULL DEFAULT '',
    parent_id  TEXT NULL REFERENCES conversations (id),
    created_at INTEGER NOT NULL
);

CREATE TABLE runs (
    id                     TEXT PRIMARY KEY,
    workflow               TEXT NOT NULL,
    conversation_id        TEXT NOT NULL REFERENCES conversations (id),
    parent_conversation_id TEXT NOT NULL,
    user_id                TEXT NOT NULL,
    user_message           TEXT NOT NULL,
    status                 TEXT NOT NULL
        CHECK (status IN ('queued', 'running', 'paused', 'failed', 'completed', 'cancelled')),
    pause_kind             TEXT NOT NULL DEFAULT '',
    pause_node             TEXT NOT NULL DEFAULT '',
    working_path           TEXT NOT NULL,
    workflow_source        BLOB NOT NULL,
    workflow_digest        TEXT NOT NULL,
    meta                   TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(meta)),
    attempt                INTEGER NOT NULL DEFAULT 0,
    recoveries             INTEGER NOT NULL DEFAULT 0,
    lease_owner            TEXT NOT NULL DEFAULT '',
    lease_token            TEXT NOT NULL DEFAULT '',
    lease_expires_at       INTEGER NULL,
    heartbeat_at           INTEGER NULL,
    created_at             INTEGER NOT NULL,
    queued_at              INTEGER NOT NULL,
    started_at             INTEGER NULL,
    finished_at            INTEGER NULL,
    last_seq               INTEGER NOT NULL DEFAULT 0
);

-- ClaimRun: the oldest queued run.
CREATE INDEX runs_claim ON runs (status, queued_at);
-- FindResumable, the dispatcher's resume gate.
CREATE INDEX runs_resume_gate ON runs (workflow, parent_conversation_id, status);
CREATE INDEX runs_conversation ON runs (conversation_id);
-- RescueExpired: running runs whose lease ran out.
CREATE INDEX runs_rescue ON runs (status, lease_expires_at);

CREATE TABLE run_events (
    run_id  TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq     INTEGER NOT NULL,
    type    TEXT NOT NULL,
    node_id TEXT NOT NULL DEFAULT '',
    attempt INTEGER NOT NULL DEFAULT 0,
    data    TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(data)),
    at      INTEGER NOT NULL,
    PRIMARY KEY (run_id, seq)
);

-- The idempotency key of node lifecycle writes: a replay finds the row instead of adding one.
CREATE UNIQUE INDEX run_events_node_lifecycle ON run_events (run_id, type, node_id, attempt)
    WHERE type IN ('node_started', 'node_completed', 'node_failed', 'node_skipped', 'loop_iteration_completed');

CREATE TABLE sessions (
    conversation_id TEXT NOT NULL DEFAULT '',
    run_id          TEXT NOT NULL DEFAULT '',
    node_id         TEXT NOT NULL DEFAULT '',
    provider        TEXT NOT NULL,
    session_id      TEXT NULL,
    updated_at      INTEGER NOT NULL,
    PRIMARY KEY (conversation_id, run_id, node_id)
);

CREATE TABLE inbound_events (
    platform    TEXT NOT NULL,
    event_id    TEXT NOT NULL,
    received_at INTEGER NOT NULL,
    PRIMARY KEY (platform, event_id)
);

-- +goose Down
DROP TABLE inbound_events;
DROP TABLE sessions;
DROP TABLE run_events;
DROP TABLE runs;
DROP TABLE conversations;
