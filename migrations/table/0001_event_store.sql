-- The table service's event store: every draw, discard, opening and penalty is an event.
-- Owned by the table service; applied at its start.

-- Tables and the rule set each plays with.
CREATE TABLE tables (
    table_id   uuid PRIMARY KEY,
    rules      jsonb NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- Append-only events. A stream is one table (`table-{uuid}`); versions count 1, 2, 3, … without
-- gaps. An append states the version it expects: the unique (stream_id, version) turns a race
-- into a conflict the caller retries, never an overwrite.
CREATE TABLE events (
    -- Global order of appends, for the outbox and for catch-up readers.
    position     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id     uuid NOT NULL UNIQUE,
    stream_id    text NOT NULL,
    version      bigint NOT NULL CHECK (version >= 1),
    -- Stable past-tense name, e.g. `TileDiscarded`.
    event_type   text NOT NULL,
    payload      jsonb NOT NULL,
    -- Actor, time, trace context (W3C `traceparent`), schema version.
    metadata     jsonb NOT NULL DEFAULT '{}',
    -- Client request id of the command that produced the event.
    request_id   text,
    recorded_at  timestamptz NOT NULL DEFAULT now(),
    -- Outbox: set once the event is on JetStream; unpublished ones are republished at start.
    published_at timestamptz,
    UNIQUE (stream_id, version)
);
CREATE INDEX events_unpublished ON events (position) WHERE published_at IS NULL;
CREATE INDEX events_request ON events (stream_id, request_id) WHERE request_id IS NOT NULL;

-- Commands already applied, by client request id, with the answer to repeat on a retry.
CREATE TABLE handled_commands (
    stream_id     text NOT NULL,
    request_id    text NOT NULL,
    actor         text NOT NULL,
    first_version bigint NOT NULL,
    last_version  bigint NOT NULL,
    response      bytea NOT NULL,
    handled_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (stream_id, request_id)
);

-- Deal seeds, kept apart from the events until the hand ends and the seed is revealed.
CREATE TABLE hand_seeds (
    stream_id   text NOT NULL,
    hand_number integer NOT NULL,
    seed        bytea NOT NULL,
    seed_sha256 bytea NOT NULL,
    revealed_at timestamptz,
    PRIMARY KEY (stream_id, hand_number)
);
