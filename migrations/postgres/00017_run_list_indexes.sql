-- Issue 34: every list is an indexed query bounded by what it returns.

-- +goose Up
-- The run list, newest first (ListRuns without a status).
CREATE INDEX runs_created_idx ON runs (created_at DESC, id DESC);
-- The run list of one state, the counts per state, and retention's candidates (Prune: finished
-- or unfinished runs created before the cut).
CREATE INDEX runs_status_created_idx ON runs (status, created_at DESC, id DESC);
-- /workflow status of a conversation and the dashboard's conversation filter: the runs started in
-- it and the runs reporting in it, per state, newest first.
CREATE INDEX runs_parent_conversation_idx ON runs (parent_conversation_id, status, created_at DESC, id DESC);
DROP INDEX runs_conversation_idx;
CREATE INDEX runs_conversation_idx ON runs (conversation_id, status, created_at DESC, id DESC);
-- Gate timers: the due timers, and the next one, of paused approval gates. Led by the columns the
-- queries fix (status, pause_kind), so a planner without statistics (SQLite never analyzes) takes
-- these and not a walk of every paused run.
DROP INDEX runs_gate_due_idx;
DROP INDEX runs_gate_remind_idx;
CREATE INDEX runs_gate_due_idx ON runs (status, pause_kind, gate_due_at) WHERE gate_due_at IS NOT NULL;
CREATE INDEX runs_gate_remind_idx ON runs (status, pause_kind, gate_remind_at) WHERE gate_remind_at IS NOT NULL;
DROP INDEX runs_gate_escalate;
CREATE INDEX runs_gate_escalate ON runs (status, pause_kind, gate_escalate_at) WHERE gate_escalate_at IS NOT NULL;
-- A run's node sessions, deleted with it.
CREATE INDEX sessions_run_idx ON sessions (run_id) WHERE run_id <> '';
-- Every run is created with its run_created event at seq 1 (db.Dialect.InsertRun).
ALTER TABLE runs ALTER COLUMN last_seq SET DEFAULT 1;

-- +goose Down
DROP INDEX runs_gate_escalate;
CREATE INDEX runs_gate_escalate ON runs (gate_escalate_at) WHERE gate_escalate_at IS NOT NULL;
DROP INDEX runs_gate_remind_idx;
DROP INDEX runs_gate_due_idx;
CREATE INDEX runs_gate_due_idx ON runs (gate_due_at) WHERE gate_due_at IS NOT NULL;
CREATE INDEX runs_gate_remind_idx ON runs (gate_remind_at) WHERE gate_remind_at IS NOT NULL;
ALTER TABLE runs ALTER COLUMN last_seq SET DEFAULT 0;
DROP INDEX sessions_run_idx;
DROP INDEX runs_conversation_idx;
CREATE INDEX runs_conversation_idx ON runs (conversation_id);
DROP INDEX runs_parent_conversation_idx;
DROP INDEX runs_status_created_idx;
DROP INDEX runs_created_idx;
