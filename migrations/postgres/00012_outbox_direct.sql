-- +goose Up
-- Gates notify people (issue 29): a run may owe a direct message (target 'direct': a message sent
-- to each person it names, in their DMs, instead of the run's thread), and a gate may escalate to
-- more people at a time of its own, found due like its timeout and reminder.
ALTER TABLE run_outbox DROP CONSTRAINT run_outbox_target_check;
ALTER TABLE run_outbox ADD CONSTRAINT run_outbox_target_check CHECK (target IN ('open', 'thread', 'live', 'edit', 'direct'));
ALTER TABLE runs ADD COLUMN gate_escalate_at TIMESTAMPTZ NULL;
CREATE INDEX runs_gate_escalate ON runs (gate_escalate_at) WHERE gate_escalate_at IS NOT NULL;

-- +goose Down
DROP INDEX runs_gate_escalate;
ALTER TABLE runs DROP COLUMN gate_escalate_at;
DELETE FROM run_outbox WHERE target = 'direct';
ALTER TABLE run_outbox DROP CONSTRAINT run_outbox_target_check;
ALTER TABLE run_outbox ADD CONSTRAINT run_outbox_target_check CHECK (target IN ('open', 'thread', 'live', 'edit'));
