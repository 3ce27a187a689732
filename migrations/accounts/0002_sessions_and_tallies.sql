-- Refresh-token rotation details, tolerant event ids, and per-table tallies of hands in progress.

-- A rotation remembers the client request id that made it, so a retried RefreshSession (same
-- request id, answer lost) gets a new session instead of counting as a reuse; and the token it
-- replaced, to follow a family.
ALTER TABLE refresh_tokens
    ADD COLUMN parent_sha256  bytea,
    ADD COLUMN used_by_request text,
    ADD COLUMN revoked_reason text;

-- Event ids are whatever the publisher put in `Nats-Msg-Id` (UUIDs today); store them as text.
ALTER TABLE consumed_events ALTER COLUMN event_id TYPE text USING event_id::text;

-- What the statistics consumer knows about the hand being played at each table: who opened and
-- how, and the in-play penalties not voided. Folded into `statistics` when the hand ends.
CREATE TABLE hand_tallies (
    table_id   text PRIMARY KEY,
    tally      jsonb NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);
