-- Scoring: every point charged, per hand and match, in tables an analyst can query with SQL.
-- Owned by the scoring service; applied at its start. Filled from table events on NATS, each
-- exactly once (event_id).

CREATE TABLE matches (
    match_id   uuid PRIMARY KEY,
    table_id   uuid NOT NULL,
    rules      jsonb NOT NULL,
    -- Player id per seat (null for a bot), index = seat.
    seat_players uuid[] NOT NULL,
    started_at timestamptz NOT NULL,
    ended_at   timestamptz,
    -- Final total per seat; null while the match runs.
    totals     integer[],
    winners    integer[]
);
CREATE INDEX matches_table ON matches (table_id);

CREATE TABLE hands (
    match_id    uuid NOT NULL REFERENCES matches (match_id),
    hand_number integer NOT NULL,
    outcome     text NOT NULL CHECK (outcome IN ('finished', 'pile_empty', 'cancelled')),
    winner_seat integer CHECK (winner_seat BETWEEN 0 AND 3),
    seed_sha256 bytea NOT NULL,
    seed        bytea,
    ended_at    timestamptz NOT NULL,
    PRIMARY KEY (match_id, hand_number)
);

-- One row per charge to one seat: in-play penalties, end-of-hand scores, and voids of a
-- cancelled hand's penalties (negative points).
CREATE TABLE ledger_entries (
    entry_id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id      uuid NOT NULL,
    match_id      uuid NOT NULL REFERENCES matches (match_id),
    table_id      uuid NOT NULL,
    hand_number   integer NOT NULL,
    seat          integer NOT NULL CHECK (seat BETWEEN 0 AND 3),
    player_id     uuid,
    kind          text NOT NULL CHECK (kind IN ('penalty', 'hand_score', 'voided')),
    points        integer NOT NULL,
    -- RULES.md reason code for a penalty; the seat's state for a hand score.
    reason        text NOT NULL,
    table_version bigint NOT NULL,
    recorded_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE (event_id, seat, kind)
);
CREATE INDEX ledger_entries_player ON ledger_entries (player_id, recorded_at DESC);
CREATE INDEX ledger_entries_match ON ledger_entries (match_id, hand_number);

-- Totals per player and match, for standings and ad-hoc analysis.
CREATE VIEW player_match_totals AS
SELECT match_id, player_id, seat, sum(points) AS total, count(*) AS entries
FROM ledger_entries
WHERE player_id IS NOT NULL
GROUP BY match_id, player_id, seat;
