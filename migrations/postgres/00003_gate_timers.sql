-- +goose Up
-- The timers of approval gates (timeout and one reminder), as times any replica can find due. They
-- are set by the pause that asks the gate and cleared when the run leaves it; the pause in
-- runs.meta keeps the whole gate, these columns only make "what is due now" an index lookup.
ALTER TABLE runs ADD COLUMN gate_due_at TIMESTAMPTZ NULL;
ALTER TABLE runs ADD COLUMN gate_remind_at TIMESTAMPTZ NULL;
CREATE INDEX runs_gate_due_idx ON runs (gate_due_at) WHERE gate_due_at IS NOT NULL;
CREATE INDEX runs_gate_remind_idx ON runs (gate_remind_at) WHERE gate_remind_at IS NOT NULL;

-- +goose Down
DROP INDEX runs_gate_remind_idx;
DROP INDEX runs_gate_due_idx;
ALTER TABLE runs DROP COLUMN gate_remind_at;
ALTER TABLE runs DROP COLUMN gate_due_at;
