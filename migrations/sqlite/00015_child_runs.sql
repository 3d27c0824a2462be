-- +goose Up
-- Child runs (issue 32): a `workflow:` node of a run starts a run of another workflow, its child.
-- parent_run_id names the run whose node started it (NULL for a run a person started) and
-- parent_node that node, so a takeover of the parent finds its child instead of starting another,
-- and the parent's views list their children. A child goes with its parent (ON DELETE CASCADE).
ALTER TABLE runs ADD COLUMN parent_run_id TEXT REFERENCES runs (id) ON DELETE CASCADE;
ALTER TABLE runs ADD COLUMN parent_node TEXT NOT NULL DEFAULT '';
CREATE INDEX runs_parent_idx ON runs (parent_run_id) WHERE parent_run_id IS NOT NULL;

-- +goose Down
DROP INDEX runs_parent_idx;
ALTER TABLE runs DROP COLUMN parent_node;
ALTER TABLE runs DROP COLUMN parent_run_id;
