-- +goose Up
-- A run's typed inputs (a JSON object of name to value; '' when its workflow has none) and the
-- concurrency group it joined ('' for none), written once when the run is created.
ALTER TABLE runs ADD COLUMN inputs TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN concurrency_group TEXT NOT NULL DEFAULT '';

-- Who holds each concurrency group, and who waits for it, oldest first (seq). A group has at most
-- one holder (the partial unique index is what enforces it, for every replica at once): taken or
-- joined in the transaction that creates the run, handed to the oldest waiter in the transaction
-- that ends the holder (completed or cancelled). A paused or failed holder keeps its group.
CREATE TABLE concurrency_holders (
    run_id     TEXT PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    group_name TEXT NOT NULL,
    holding    BOOLEAN NOT NULL,
    seq        BIGINT NOT NULL,
    since      INTEGER NOT NULL
);
CREATE UNIQUE INDEX concurrency_holders_holding ON concurrency_holders (group_name) WHERE holding;
CREATE INDEX concurrency_holders_waiting ON concurrency_holders (group_name, seq) WHERE NOT holding;

-- +goose Down
DROP TABLE concurrency_holders;
ALTER TABLE runs DROP COLUMN concurrency_group;
ALTER TABLE runs DROP COLUMN inputs;
