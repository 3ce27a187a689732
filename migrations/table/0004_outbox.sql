-- The outbox as a narrow table of its own: an append adds its events' positions, the publisher
-- deletes them once JetStream holds the events. Marking `events.published_at` instead rewrote
-- every event row (a column in a partial index's predicate rules out a HOT update), so each
-- event was written twice, with every index of `events`.
CREATE TABLE outbox (
    -- `events.position` of an event not yet on JetStream.
    position bigint PRIMARY KEY
);
INSERT INTO outbox (position) SELECT position FROM events WHERE published_at IS NULL;
DROP INDEX events_unpublished;
ALTER TABLE events DROP COLUMN published_at;
