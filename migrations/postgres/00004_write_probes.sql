-- +goose Up
-- One row per replica, rewritten by every readiness probe: a write that proves the database still
-- accepts writes (a full disk or a read-only database fails it), so /readyz can say so.
CREATE TABLE write_probes (
    replica   TEXT PRIMARY KEY,
    probed_at TIMESTAMPTZ NOT NULL
);

-- +goose Down
DROP TABLE write_probes;
