-- Scoring as a projection of the table events: every applied event recorded (exactly once, in
-- each table's version order), the events that could not be read set aside, the per-table fold,
-- and the ledger, hands and matches. 0001's tables never held a row (nothing filled them), so
-- they are replaced rather than altered.

DROP VIEW IF EXISTS player_match_totals;
DROP TABLE IF EXISTS ledger_entries;
DROP TABLE IF EXISTS hands;
DROP TABLE IF EXISTS matches;

-- Every table event applied, in the same transaction as what it changed. `payload` is the public
-- copy as published (`okey_table::Published`), kept for re-verification and rebuilds.
CREATE TABLE applied_events (
    event_id   uuid PRIMARY KEY,
    table_id   uuid NOT NULL,
    version    bigint NOT NULL CHECK (version >= 1),
    event_type text NOT NULL,
    event_time timestamptz NOT NULL,
    payload    jsonb NOT NULL,
    -- Why the event changed nothing although it was in order (it could not be applied).
    set_aside  text,
    applied_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (table_id, version)
);

-- Each table's fold: the last version applied (the next one applies, a later one waits) and what
-- the consumer keeps between events (seats, the hand in progress, running totals).
CREATE TABLE table_progress (
    table_id   uuid PRIMARY KEY,
    version    bigint NOT NULL,
    tally      jsonb NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- Events that arrived before an earlier version of their table (the table service's outbox can
-- publish out of order when a connection drops mid-batch): kept until that version is applied,
-- then applied in order and deleted.
CREATE TABLE early_events (
    table_id    uuid NOT NULL,
    version     bigint NOT NULL,
    payload     bytea NOT NULL,
    received_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (table_id, version)
);

-- Messages that could not be read (not an `okey_table::Published`, no event id): kept with the
-- reason, acknowledged, and counted in `okey.scoring.events.poisoned`.
CREATE TABLE poison_events (
    poison_id       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    stream_sequence bigint NOT NULL UNIQUE,
    subject         text NOT NULL,
    event_id        text,
    -- From the `Okey-Table` and `Okey-Version` headers, when present: that version of the
    -- table is passed over, so the table's later events do not wait for it.
    table_id        uuid,
    version         bigint,
    reason          text NOT NULL,
    payload         bytea NOT NULL,
    received_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX poison_events_table ON poison_events (table_id, version);

-- One match per table (`matches/{table}`: a table plays one match).
CREATE TABLE matches (
    match_id     uuid PRIMARY KEY,
    origin       text NOT NULL CHECK (origin IN ('operator', 'quick_play', 'private_room')),
    preset       text NOT NULL,
    partners     boolean NOT NULL,
    rules        jsonb NOT NULL,
    -- `players/{id}` per seat; null for a bot or a free seat. The player a seat belongs to for the
    -- match: a player who leaves during it keeps the seat's results (a bot plays for them).
    seat_players text[] NOT NULL CHECK (cardinality(seat_players) = 4),
    -- Seats a bot occupies (not a bot standing in for a player who left).
    seat_bots    boolean[] NOT NULL CHECK (cardinality(seat_bots) = 4),
    -- The display name each seat's player sat down with, when the table was told it.
    seat_names   text[] NOT NULL CHECK (cardinality(seat_names) = 4),
    -- Set when the match ends: true unless it was played at a private room's table or with no
    -- person seated (bots only). Standings count ranked matches only.
    ranked       boolean NOT NULL DEFAULT false,
    created_at   timestamptz NOT NULL,
    started_at   timestamptz,
    ended_at     timestamptz,
    totals       bigint[],
    winners      integer[],
    draw         boolean
);
CREATE INDEX matches_ended ON matches (ended_at DESC, match_id DESC) WHERE ended_at IS NOT NULL;

-- Every deal. A hand cancelled because all four opened with pairs is dealt again under the same
-- number, so a deal is keyed by the table version of its `hand_dealt`.
CREATE TABLE hands (
    match_id      uuid NOT NULL REFERENCES matches (match_id),
    dealt_version bigint NOT NULL,
    hand_number   integer NOT NULL,
    first_seat    integer NOT NULL CHECK (first_seat BETWEEN 0 AND 3),
    indicator     text NOT NULL,
    -- Hex sha256 of the 32 seed bytes, published at the deal.
    seed_sha256   text NOT NULL,
    -- Hex of the seed, revealed when the hand ends (null while it is played).
    seed          text,
    dealt_at      timestamptz NOT NULL,
    outcome       text CHECK (outcome IN ('finished', 'pile_empty', 'cancelled')),
    winner_seat   integer CHECK (winner_seat BETWEEN 0 AND 3),
    multiplier    integer,
    scores        integer[],
    penalties     integer[],
    totals_after  bigint[],
    -- Re-verification: true when the re-dealt, re-folded hand gave every published number.
    verified      boolean,
    verify_problem text,
    ended_at      timestamptz,
    PRIMARY KEY (match_id, dealt_version)
);

-- One immutable row per charge to one seat. Kinds: `penalty` (an in-play penalty), `void` (minus a
-- voided penalty: a table rollback or a cancelled hand), `hand_score` (four per ended hand, zero
-- points included), `floor` (points lost when a total is floored at zero). For each seat the sum
-- of its rows is its match total.
CREATE TABLE ledger_entries (
    entry_id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    event_id      uuid NOT NULL REFERENCES applied_events (event_id),
    table_version bigint NOT NULL,
    match_id      uuid NOT NULL REFERENCES matches (match_id),
    hand_number   integer NOT NULL,
    dealt_version bigint NOT NULL,
    seat          integer NOT NULL CHECK (seat BETWEEN 0 AND 3),
    -- 0 (seats 0 and 2) or 1 (seats 1 and 3) at a partners table, else null.
    team          integer CHECK (team IN (0, 1)),
    player_id     text,
    kind          text NOT NULL CHECK (kind IN ('penalty', 'void', 'hand_score', 'floor')),
    -- `penalty`, `void`: RULES.md's penalty code; `hand_score`: the seat's state at the end
    -- (`finished`, `partner_finished`, `never_opened`, `opened_melds`, `opened_pairs`,
    -- `cancelled`); `floor`: `floor_totals_at_zero`.
    reason        text NOT NULL,
    points        integer NOT NULL,
    -- The engine's penalty number within the hand (`penalty`, `void`).
    penalty_id    integer,
    -- `void`: what voided it (`table_rolled_back` or `hand_cancelled`).
    voided_by     text,
    -- `hand_score`: the finish multiplier and the engine's basis for the score.
    multiplier    integer,
    basis         text,
    event_time    timestamptz NOT NULL,
    recorded_at   timestamptz NOT NULL DEFAULT now(),
    UNIQUE NULLS NOT DISTINCT (event_id, seat, kind, penalty_id)
);
CREATE INDEX ledger_entries_player ON ledger_entries (player_id, entry_id DESC);
CREATE INDEX ledger_entries_match ON ledger_entries (match_id, entry_id);

-- Per player and match: the seat's final total and whether it won, for standings.
CREATE TABLE match_results (
    match_id  uuid NOT NULL REFERENCES matches (match_id),
    player_id text NOT NULL,
    seat      integer NOT NULL CHECK (seat BETWEEN 0 AND 3),
    total     bigint NOT NULL,
    won       boolean NOT NULL,
    ranked    boolean NOT NULL,
    ended_at  timestamptz NOT NULL,
    display_name text,
    PRIMARY KEY (match_id, seat)
);
CREATE INDEX match_results_player ON match_results (player_id, ended_at DESC, match_id DESC);
CREATE INDEX match_results_ranked ON match_results (ended_at) WHERE ranked;
