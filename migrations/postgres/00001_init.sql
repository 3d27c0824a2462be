-- +goose Up

-- A conversation is a place where messages are exchanged: a channel, a thread, a DM, a terminal.
CREATE TABLE conversations (
    id         TEXT PRIMARY KEY,
    platform   TEXT NOT NULL,
    channel_id TEXT NOT NULL,
    thread_id  TEXT NOT NULL DEFAULT '',
    parent_id  TEXT NULL REFERENCES conversations (id),
    created_at TIMESTAMPTZ NOT NULL
);

-- One execution of a workflow. status only moves through compare-and-set updates (see db.Transitions);
-- node progress is not here but in run_events.
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
    workflow_source        BYTEA NOT NULL,
    workflow_digest        TEXT NOT NULL,
    meta                   JSONB NOT NULL DEFAULT '{}',
    attempt                INT NOT NULL DEFAULT 0,
    recoveries             INT NOT NULL DEFAULT 0,
    lease_owner            TEXT NOT NULL DEFAULT '',
    lease_token            TEXT NOT NULL DEFAULT '',
    lease_expires_at       TIMESTAMPTZ NULL,
    heartbeat_at           TIMESTAMPTZ NULL,
    created_at             TIMESTAMPTZ NOT NULL,
    queued_at              TIMESTAMPTZ NOT NULL,
    started_at             TIMESTAMPTZ NULL,
    finished_at            TIMESTAMPTZ NULL,
    -- the seq of the run's latest event; bumped in the same transaction that appends one
    last_seq               BIGINT NOT NULL DEFAULT 0
);

-- ClaimRun: the oldest queued run.
CREATE INDEX runs_claim_idx ON runs (status, queued_at);
-- The dispatcher's resume gate: failed or paused runs of a workflow in a parent conversation.
CREATE INDEX runs_resume_gate_idx ON runs (workflow, parent_conversation_id, status);
CREATE INDEX runs_conversation_idx ON runs (conversation_id);
-- RescueExpired: running runs whose lease ran out.
CREATE INDEX runs_rescue_idx ON runs (status, lease_expires_at);

-- The append-only history of a run; seq is 1-based and gap-free per run.
CREATE TABLE run_events (
    run_id  TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq     BIGINT NOT NULL,
    type    TEXT NOT NULL,
    node_id TEXT NOT NULL DEFAULT '',
    attempt INT NOT NULL DEFAULT 0,
    data    JSONB NOT NULL DEFAULT '{}',
    at      TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (run_id, seq)
);

-- Node lifecycle records are idempotent: a recovering worker may replay them, and a replay must
-- never become a second row (db.EventType.Idempotent lists the same types).
CREATE UNIQUE INDEX run_events_lifecycle_idx ON run_events (run_id, type, node_id, attempt)
    WHERE type IN ('node_started', 'node_completed', 'node_failed', 'node_skipped', 'loop_iteration_completed');

-- AI provider sessions of a conversation (run_id and node_id empty) or of one node of a run.
CREATE TABLE sessions (
    conversation_id TEXT NOT NULL DEFAULT '',
    run_id          TEXT NOT NULL DEFAULT '',
    node_id         TEXT NOT NULL DEFAULT '',
    provider        TEXT NOT NULL,
    session_id      TEXT NULL,
    updated_at      TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (conversation_id, run_id, node_id)
);

-- Platform event ids already handled, so an event delivered to every replica is acted on once.
CREATE TABLE inbound_events (
    platform    TEXT NOT NULL,
    event_id    TEXT NOT NULL,
    received_at TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (platform, event_id)
);

-- +goose Down
DROP TABLE inbound_events;
DROP TABLE sessions;
DROP TABLE run_events;
DROP TABLE runs;
DROP TABLE conversations;
