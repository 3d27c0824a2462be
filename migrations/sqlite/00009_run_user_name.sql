-- +goose Up
-- The display name of the person who started the run, as their platform gave it then (normalised
-- and bounded by the bot), so every replica names the requester in messages instead of a bare id.
-- Empty for runs started before it, and where the platform gives no name: messages show the id.
ALTER TABLE runs ADD COLUMN user_name TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE runs DROP COLUMN user_name;
