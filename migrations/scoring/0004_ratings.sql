-- Ratings and leaderboards, written in the transaction of the `match_ended` they come from
-- (`services/scoring/src/skill.rs` says which matches are rated and how). Ratings are a fold of
-- the rated matches in the order they ended (end time, then match id), whatever order their
-- events arrive in: a match that arrives after one that ended later is rated in its place and the
-- later ones of the players concerned are rated again, so the numbers are a function of the
-- rated matches alone (a rebuild gives the same).

-- Every rated match: who held each seat and how it ended.
CREATE TABLE rated_matches (
    match_id     uuid PRIMARY KEY REFERENCES matches (match_id),
    ended_at     timestamptz NOT NULL,
    partners     boolean NOT NULL,
    -- `players/{id}` per seat; null for the bot seat (if any).
    seat_players text[] NOT NULL CHECK (cardinality(seat_players) = 4),
    -- The fixed rating of the bot seat, null for a person's.
    bot_ratings  integer[] NOT NULL CHECK (cardinality(bot_ratings) = 4),
    totals       bigint[] NOT NULL CHECK (cardinality(totals) = 4),
    winners      integer[] NOT NULL
);
CREATE INDEX rated_matches_order ON rated_matches (ended_at, match_id);

-- What each rated match did to each person's rating (before and after).
CREATE TABLE rating_changes (
    match_id           uuid NOT NULL REFERENCES rated_matches (match_id),
    seat               integer NOT NULL CHECK (seat BETWEEN 0 AND 3),
    player_id          text NOT NULL,
    ended_at           timestamptz NOT NULL,
    rating_before      float8 NOT NULL,
    uncertainty_before float8 NOT NULL,
    rating_after       float8 NOT NULL,
    uncertainty_after  float8 NOT NULL,
    PRIMARY KEY (match_id, seat)
);
CREATE INDEX rating_changes_player ON rating_changes (player_id, ended_at DESC, match_id DESC);

-- Each rated player's current rating, with the rated matches and wins behind it.
CREATE TABLE ratings (
    player_id    text PRIMARY KEY,
    rating       float8 NOT NULL,
    uncertainty  float8 NOT NULL,
    -- The rating rounded to a whole point: what is shown and what the all-time board ranks.
    points       integer NOT NULL,
    matches      bigint NOT NULL,
    wins         bigint NOT NULL,
    display_name text,
    last_ended_at timestamptz NOT NULL
);
-- The all-time board, best first (read backwards), and a place: 1 + the listed players above.
CREATE INDEX ratings_board ON ratings (points, player_id) INCLUDE (matches);

-- The day, ISO week and month boards (UTC periods, as the standings'): per period and player,
-- twice the score (opponents finished ahead of, a tie with an opponent a half) over the rated
-- matches that ended in it.
CREATE TABLE period_scores (
    period       text NOT NULL CHECK (period IN ('day', 'week', 'month')),
    starts       timestamptz NOT NULL,
    player_id    text NOT NULL,
    score2       bigint NOT NULL,
    matches      bigint NOT NULL,
    wins         bigint NOT NULL,
    -- The board's order in one ascending key: more score first, then fewer matches.
    minus_score2 bigint GENERATED ALWAYS AS (-score2) STORED,
    PRIMARY KEY (period, starts, player_id)
);
CREATE INDEX period_scores_board ON period_scores (period, starts, minus_score2, matches, player_id);

-- Analysts read ratings too (docs/analytics.md).
CREATE VIEW analytics.rating_changes AS
SELECT c.match_id, c.seat, c.player_id, c.ended_at, c.rating_before, c.uncertainty_before,
       c.rating_after, c.uncertainty_after, c.rating_after - c.rating_before AS change,
       r.partners
FROM public.rating_changes c JOIN public.rated_matches r USING (match_id);

CREATE VIEW analytics.ratings AS
SELECT player_id, rating, uncertainty, points, matches, wins, last_ended_at
FROM public.ratings;

DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'okey_analyst') THEN
        GRANT SELECT ON analytics.rating_changes, analytics.ratings TO okey_analyst;
    END IF;
END
$$;
