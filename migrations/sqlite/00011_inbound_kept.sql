-- +goose Up
-- An inbound event is kept until it is handled (issue 27): the message itself (bounded), which
-- process holds it and until when, and when it was handled. A process that dies between recording a
-- request and acting on it leaves the event kept; another takes it over once the claim lapses.
-- Events recorded only to de-duplicate them (and every row from before) keep no message.
ALTER TABLE inbound_events ADD COLUMN message TEXT NULL CHECK (length(CAST(message AS BLOB)) <= 65536);
ALTER TABLE inbound_events ADD COLUMN claim_owner TEXT NOT NULL DEFAULT '';
ALTER TABLE inbound_events ADD COLUMN claim_until INTEGER NULL;
-- How many times a process took the event over from one that died holding it: a request whose
-- handling kills every process that tries is given up after a few, not passed on forever.
ALTER TABLE inbound_events ADD COLUMN takeovers INTEGER NOT NULL DEFAULT 0;
ALTER TABLE inbound_events ADD COLUMN handled_at INTEGER NULL;

-- The kept events, few at any time (those in flight): renewals and take-overs read only these.
CREATE INDEX inbound_events_kept ON inbound_events (platform, claim_until) WHERE message IS NOT NULL;

-- +goose Down
DROP INDEX inbound_events_kept;
ALTER TABLE inbound_events DROP COLUMN handled_at;
ALTER TABLE inbound_events DROP COLUMN takeovers;
ALTER TABLE inbound_events DROP COLUMN claim_until;
ALTER TABLE inbound_events DROP COLUMN claim_owner;
ALTER TABLE inbound_events DROP COLUMN message;
