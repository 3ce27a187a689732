-- Matchmaking: private rooms joined by code, and tickets of players looking for a public table.
-- Owned by the matchmaking service; applied at its start. Queues themselves live in Redis.

CREATE TABLE rooms (
    room_id        uuid PRIMARY KEY,
    code           text NOT NULL,
    host_player_id uuid NOT NULL,
    rules          jsonb NOT NULL,
    state          text NOT NULL CHECK (state IN ('open', 'started', 'closed')),
    fill_with_bots boolean NOT NULL,
    bot_level      text NOT NULL,
    -- `tables/{table}` once started.
    table_name     text,
    created_at     timestamptz NOT NULL DEFAULT now(),
    expires_at     timestamptz NOT NULL
);
-- A code is unique among open rooms; closed rooms free their code.
CREATE UNIQUE INDEX rooms_open_code ON rooms (code) WHERE state = 'open';

CREATE TABLE room_members (
    room_id   uuid NOT NULL REFERENCES rooms (room_id),
    seat      integer NOT NULL CHECK (seat BETWEEN 0 AND 3),
    player_id uuid NOT NULL,
    joined_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (room_id, seat),
    UNIQUE (room_id, player_id)
);

CREATE TABLE tickets (
    ticket_id  uuid PRIMARY KEY,
    player_id  uuid NOT NULL,
    rules      jsonb NOT NULL,
    allow_bots boolean NOT NULL,
    bot_level  text NOT NULL,
    state      text NOT NULL CHECK (state IN ('searching', 'matched', 'cancelled', 'expired')),
    table_name text,
    seat       integer,
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL
);
-- At most one open ticket per player.
CREATE UNIQUE INDEX tickets_one_searching ON tickets (player_id) WHERE state = 'searching';

-- Client request ids already answered, so a retried command returns its first result.
CREATE TABLE handled_requests (
    request_id text NOT NULL,
    caller     text NOT NULL,
    rpc        text NOT NULL,
    response   bytea NOT NULL,
    handled_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (caller, request_id)
);
