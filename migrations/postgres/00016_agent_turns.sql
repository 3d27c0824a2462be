-- +goose Up
-- agent_turns holds one row per agent turn (an agent_usage event), copied by the trigger below in
-- the statement that inserts the event, so the sums per node, run, workflow and day that budgets,
-- status and the dashboard read are one indexed query, never a scan of run_events. Tokens are 0 and
-- unknown = 1 when the CLI reported no usage; cost_nanos (nanodollars) is NULL when it is unknown.
CREATE TABLE agent_turns (
    run_id             TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    seq                BIGINT NOT NULL,
    node_id            TEXT NOT NULL,
    workflow           TEXT NOT NULL,
    provider           TEXT NOT NULL,
    model              TEXT NOT NULL,
    unknown            SMALLINT NOT NULL,
    input_tokens       BIGINT NOT NULL,
    output_tokens      BIGINT NOT NULL,
    cache_read_tokens  BIGINT NOT NULL,
    cache_write_tokens BIGINT NOT NULL,
    model_turns        BIGINT NOT NULL,
    cost_nanos         BIGINT NULL,
    estimated          SMALLINT NOT NULL,
    at                 TIMESTAMPTZ NOT NULL,
    PRIMARY KEY (run_id, seq)
);

-- The daily budget (every turn since midnight UTC) and the dashboard's 30 days per workflow.
CREATE INDEX agent_turns_at_idx ON agent_turns (at);
CREATE INDEX agent_turns_workflow_idx ON agent_turns (workflow, at);

-- +goose StatementBegin
CREATE FUNCTION agent_turns_copy() RETURNS trigger AS $$
BEGIN
    INSERT INTO agent_turns (run_id, seq, node_id, workflow, provider, model, unknown, input_tokens, output_tokens,
        cache_read_tokens, cache_write_tokens, model_turns, cost_nanos, estimated, at)
    SELECT NEW.run_id, NEW.seq, NEW.node_id, r.workflow, COALESCE(NEW.data->>'provider', ''),
        COALESCE(NEW.data->>'model', ''),
        CASE WHEN COALESCE((NEW.data->>'unknown')::boolean, false) THEN 1 ELSE 0 END,
        COALESCE((NEW.data->>'input_tokens')::bigint, 0), COALESCE((NEW.data->>'output_tokens')::bigint, 0),
        COALESCE((NEW.data->>'cache_read_tokens')::bigint, 0), COALESCE((NEW.data->>'cache_write_tokens')::bigint, 0),
        COALESCE((NEW.data->>'turns')::bigint, 0), (NEW.data->>'cost_nanos')::bigint,
        CASE WHEN COALESCE((NEW.data->>'estimated')::boolean, false) THEN 1 ELSE 0 END, NEW.at
    FROM runs r WHERE r.id = NEW.run_id;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
-- +goose StatementEnd

CREATE TRIGGER run_events_agent_usage AFTER INSERT ON run_events
    FOR EACH ROW WHEN (NEW.type = 'agent_usage') EXECUTE FUNCTION agent_turns_copy();

-- +goose Down
DROP TRIGGER run_events_agent_usage ON run_events;
DROP FUNCTION agent_turns_copy();
DROP TABLE agent_turns;
