-- +goose Up
-- One row per trigger (workflow/name) that ever fired or was seen by a scheduler: since is when it
-- was first seen (a new schedule does not catch up on times before it existed), and its row is the
-- per-trigger lock every fire takes first, so two replicas never decide the same trigger at once.
CREATE TABLE triggers (
    trigger_id TEXT        PRIMARY KEY,
    since   INTEGER     NOT NULL
);

-- Each fire of a trigger, keyed by what makes it unique: the scheduled time of a schedule, the
-- delivery id of a webhook. Whichever replica inserts it first fires it; a second insert finds it.
-- outcome: started (run_id is its run), skipped (reason says why), waiting (overlap: queue; its run
-- starts when the previous one ends). The payload of a delivery is kept here, not in the run, and
-- reaches the run's nodes as the file $TRIGGER_PAYLOAD_FILE.
CREATE TABLE trigger_fires (
    trigger_id   TEXT        NOT NULL REFERENCES triggers (trigger_id),
    fire_key     TEXT        NOT NULL,
    kind         TEXT        NOT NULL CHECK (kind IN ('schedule', 'webhook', 'github')),
    event        TEXT        NOT NULL DEFAULT '',
    scheduled_at INTEGER     NULL,
    fired_at     INTEGER     NOT NULL,
    outcome      TEXT        NOT NULL CHECK (outcome IN ('started', 'skipped', 'waiting')),
    reason       TEXT        NOT NULL DEFAULT '',
    run_id       TEXT        NULL REFERENCES runs (id) ON DELETE SET NULL,
    payload      BLOB        NULL,
    PRIMARY KEY (trigger_id, fire_key)
);
-- The latest fires of a trigger (the dashboard, catch-up's last scheduled time).
CREATE INDEX trigger_fires_recent ON trigger_fires (trigger_id, fired_at DESC);
CREATE INDEX trigger_fires_scheduled ON trigger_fires (trigger_id, scheduled_at DESC) WHERE scheduled_at IS NOT NULL;
CREATE UNIQUE INDEX trigger_fires_run ON trigger_fires (run_id) WHERE run_id IS NOT NULL;
CREATE INDEX trigger_fires_waiting ON trigger_fires (trigger_id, fired_at) WHERE outcome = 'waiting';

-- +goose Down
DROP TABLE trigger_fires;
DROP TABLE triggers;
