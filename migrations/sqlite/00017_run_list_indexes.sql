-- Issue 34: every list is an indexed query bounded by what it returns, and the per-node write path
-- no longer rewrites the runs row.

-- +goose Up
-- The run list, newest first (ListRuns without a status).
CREATE INDEX runs_created ON runs (created_at DESC, id DESC);
-- The run list of one state, the counts per state, and retention's candidates (Prune: finished
-- or unfinished runs created before the cut).
CREATE INDEX runs_status_created ON runs (status, created_at DESC, id DESC);
-- /workflow status of a conversation and the dashboard's conversation filter: the runs started in
-- it and the runs reporting in it, per state, newest first.
CREATE INDEX runs_parent_conversation ON runs (parent_conversation_id, status, created_at DESC, id DESC);
DROP INDEX runs_conversation;
CREATE INDEX runs_conversation ON runs (conversation_id, status, created_at DESC, id DESC);
-- Gate timers: the due timers, and the next one, of paused approval gates. Led by the columns the
-- queries fix (status, pause_kind), so a planner without statistics (SQLite never analyzes) takes
-- these and not a walk of every paused run.
DROP INDEX runs_gate_due;
DROP INDEX runs_gate_remind;
CREATE INDEX runs_gate_due ON runs (status, pause_kind, gate_due_at) WHERE gate_due_at IS NOT NULL;
CREATE INDEX runs_gate_remind ON runs (status, pause_kind, gate_remind_at) WHERE gate_remind_at IS NOT NULL;
DROP INDEX runs_gate_escalate;
CREATE INDEX runs_gate_escalate ON runs (status, pause_kind, gate_escalate_at) WHERE gate_escalate_at IS NOT NULL;
-- A run's node sessions, deleted with it.
CREATE INDEX sessions_run ON sessions (run_id) WHERE run_id <> '';
-- The seq of a run's next event is one past its latest (the primary key of run_events finds it):
-- the single writer holds the database, and the runs row, with the run's frozen workflow source,
-- is no longer rewritten by every event.
ALTER TABLE runs DROP COLUMN last_seq;

-- +goose Down
DROP INDEX runs_gate_escalate;
CREATE INDEX runs_gate_escalate ON runs (gate_escalate_at) WHERE gate_escalate_at IS NOT NULL;
DROP INDEX runs_gate_remind;
DROP INDEX runs_gate_due;
CREATE INDEX runs_gate_due ON runs (gate_due_at) WHERE gate_due_at IS NOT NULL;
CREATE INDEX runs_gate_remind ON runs (gate_remind_at) WHERE gate_remind_at IS NOT NULL;
ALTER TABLE runs ADD COLUMN last_seq INTEGER NOT NULL DEFAULT 0;
UPDATE runs SET last_seq = COALESCE((SELECT MAX(seq) FROM run_events WHERE run_id = runs.id), 0);
DROP INDEX sessions_run;
DROP INDEX runs_conversation;
CREATE INDEX runs_conversation ON runs (conversation_id);
DROP INDEX runs_parent_conversation;
DROP INDEX runs_status_created;
DROP INDEX runs_created;
