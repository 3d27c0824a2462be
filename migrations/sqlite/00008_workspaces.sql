-- +goose Up
-- Where a run's workspace lives (docs/deploy.md, "Workspaces"). workspace_home is the token of the
-- THREADFLOW_HOME that holds it ('' until a worker first creates it); workspace_remote is the
-- WORKSPACE_REMOTE it is pushed to, without credentials ('' when it is not pushed anywhere).
ALTER TABLE runs ADD COLUMN workspace_home TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN workspace_remote TEXT NOT NULL DEFAULT '';

-- The THREADFLOW_HOMEs of the live processes. Each process renews its row with its leases; a home
-- that no live row names is gone, and only then may another replica take over the runs whose
-- workspaces it held.
CREATE TABLE workspace_homes (
    home_token TEXT        NOT NULL, -- the token in the home's marker file
    owner      TEXT        NOT NULL, -- REPLICA_ID of the process
    host       TEXT        NOT NULL,
    remote     TEXT        NOT NULL DEFAULT '', -- its WORKSPACE_REMOTE, without credentials
    expires_at INTEGER NOT NULL,
    PRIMARY KEY (home_token, owner)
);

-- +goose Down
DROP TABLE workspace_homes;
ALTER TABLE runs DROP COLUMN workspace_remote;
ALTER TABLE runs DROP COLUMN workspace_home;
