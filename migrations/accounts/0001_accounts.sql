-- Accounts: players, the devices guests sign in from, refresh tokens, profiles and statistics.
-- Owned by the accounts service; applied at its start.

CREATE TABLE accounts (
    player_id     uuid PRIMARY KEY,
    kind          text NOT NULL CHECK (kind IN ('guest', 'permanent')),
    -- Set when a guest is upgraded; the player id never changes.
    username      text UNIQUE,
    -- argon2id PHC string; never the password itself.
    password_hash text,
    roles         text[] NOT NULL DEFAULT ARRAY['player'],
    display_name  text NOT NULL,
    avatar_ref    text NOT NULL DEFAULT '',
    created_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    CHECK ((kind = 'permanent') = (username IS NOT NULL AND password_hash IS NOT NULL))
);

-- A guest is bound to the installation it signed in from.
CREATE TABLE devices (
    device_id  text PRIMARY KEY,
    player_id  uuid NOT NULL REFERENCES accounts (player_id),
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX devices_player ON devices (player_id);

-- Refresh tokens rotate on use. Only a hash is stored. All tokens descended from one sign-in
-- share a family; presenting a used token revokes the whole family.
CREATE TABLE refresh_tokens (
    token_sha256 bytea PRIMARY KEY,
    family_id    uuid NOT NULL,
    player_id    uuid NOT NULL REFERENCES accounts (player_id),
    device_id    text,
    issued_at    timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL,
    used_at      timestamptz,
    revoked_at   timestamptz
);
CREATE INDEX refresh_tokens_player ON refresh_tokens (player_id);
CREATE INDEX refresh_tokens_family ON refresh_tokens (family_id);

-- Client request ids already answered, so a retried command returns its first result.
CREATE TABLE handled_requests (
    request_id  text NOT NULL,
    -- The caller (or the device id before sign-in).
    caller      text NOT NULL,
    rpc         text NOT NULL,
    response    bytea NOT NULL,
    handled_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (caller, request_id)
);

-- Statistics, kept from table and scoring events on NATS.
CREATE TABLE statistics (
    player_id       uuid PRIMARY KEY REFERENCES accounts (player_id),
    hands_played    bigint NOT NULL DEFAULT 0,
    hands_won       bigint NOT NULL DEFAULT 0,
    matches_played  bigint NOT NULL DEFAULT 0,
    matches_won     bigint NOT NULL DEFAULT 0,
    score_sum       bigint NOT NULL DEFAULT 0,
    hands_opened    bigint NOT NULL DEFAULT 0,
    pair_openings   bigint NOT NULL DEFAULT 0,
    updated_at      timestamptz NOT NULL DEFAULT now()
);

-- Events already counted into statistics: consuming is idempotent on event id.
CREATE TABLE consumed_events (
    event_id    uuid PRIMARY KEY,
    consumed_at timestamptz NOT NULL DEFAULT now()
);
