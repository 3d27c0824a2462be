-- +goose Up
-- agent_turns holds one row per agent turn (an agent_usage event), copied by the trigger below in
-- the statement that inserts the event, so the sums per node, run, workflow and day that budgets,
-- status and the dashboard read are one indexed query, never a scan of run_events. Tokens are 0 and
-- unknown = 1 when the CLI reported no usage; cost_nanos (nanodollars) is NULL when it is unknown.
CREATE TABLE agent_turns (
    run_id             TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq                INTEGER NOT NULL,
    node_id            TEXT NOT NULL,
    workflow           TEXT NOT NULL,
    provider           TEXT NOT NULL,
    model              TEXT NOT NULL,
    unknown            INTEGER NOT NULL,
    input_tokens       INTEGER NOT NULL,
    output_tokens      INTEGER NOT NULL,
    cache_read_tokens  INTEGER NOT NULL,
    cache_write_tokens INTEGER NOT NULL,
    model_turns        INTEGER NOT NULL,
    cost_nanos         INTEGER NULL,
    estimated          INTEGER NOT NULL,
    at                 INTEGER NOT NULL,
    PRIMARY KEY (run_id, seq)
);

-- The daily budget (every turn since midnight UTC) and the dashboard's 30 days per workflow.
CREATE INDEX agent_turns_at_idx ON agent_turns (at);
CREATE INDEX agent_turns_workflow_idx ON agent_turns (workflow, at);

-- +goose StatementBegin
CREATE TRIGGER run_events_agent_usage AFTER INSERT ON run_events
WHEN NEW.type = 'agent_usage'
BEGIN
    INSERT INTO agent_turns (run_id, seq, node_id, workflow, provider, model, unknown, input_tokens, output_tokens,
        cache_read_tokens, cache_write_tokens, model_turns, cost_nanos, estimated, at)
    SELECT NEW.run_id, NEW.seq, NEW.node_id, r.workflow, COALESCE(json_extract(NEW.data, '$.provider'), ''),
        COALESCE(json_extract(NEW.data, '$.model'), ''),
        CASE WHEN COALESCE(json_extract(NEW.data, '$.unknown'), 0) THEN 1 ELSE 0 END,
        COALESCE(json_extract(NEW.data, '$.input_tokens'), 0), COALESCE(json_extract(NEW.data, '$.output_tokens'), 0),
        COALESCE(json_extract(NEW.data, '$.cache_read_tokens'), 0), COALESCE(json_extract(NEW.data, '$.cache_write_tokens'), 0),
        COALESCE(json_extract(NEW.data, '$.turns'), 0), json_extract(NEW.data, '$.cost_nanos'),
        CASE WHEN COALESCE(json_extract(NEW.data, '$.estimated'), 0) THEN 1 ELSE 0 END, NEW.at
    FROM runs r WHERE r.id = NEW.run_id;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER run_events_agent_usage;
DROP TABLE agent_turns;
