-- Places on the leaderboards without counting every player ahead. A place is 1 + the players
-- ahead in the board's order; counting them read one index entry per player ahead (100,000 for
-- the last of 100,000). These tables hold how many players stand at each position of a board's
-- order, so a place is a sum over the positions ahead: a few hundred or thousand rows, however
-- many players there are. Triggers on the rows they count keep them, in the writer's own
-- transaction, so every writer (the consumer, `--rebuild`, a repair by hand) keeps them true.
-- `services/scoring/src/reads.rs` (`board_rank`) reads them.

-- The matches a position of the all-time board is kept at: the exact number up to this, this
-- for every player with more. A board that asks for at most this many matches sums the
-- positions; one that asks for more counts its players. One definition, read by the trigger and
-- by `board_rank`.
CREATE FUNCTION rating_places_matches_cap() RETURNS integer
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN 32;

-- The all-time board (rating points, more first): players per rating point and matches played
-- (capped). Positions nobody holds any more stay at 0.
CREATE TABLE rating_places (
    points  integer NOT NULL,
    matches integer NOT NULL CHECK (matches >= 0),
    players bigint NOT NULL CHECK (players >= 0),
    PRIMARY KEY (points, matches)
);

-- A period's board (score, more first; then matches, fewer first): players per period, score
-- and matches. The matches are exact (they are part of the order).
CREATE TABLE period_places (
    period       text NOT NULL,
    starts       timestamptz NOT NULL,
    minus_score2 bigint NOT NULL,
    matches      bigint NOT NULL,
    players      bigint NOT NULL CHECK (players >= 0),
    PRIMARY KEY (period, starts, minus_score2, matches)
);

CREATE FUNCTION count_rating_places() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        UPDATE rating_places SET players = players - 1
        WHERE points = OLD.points AND matches = least(OLD.matches, rating_places_matches_cap());
    END IF;
    IF TG_OP IN ('UPDATE', 'INSERT') THEN
        INSERT INTO rating_places AS p (points, matches, players)
        VALUES (NEW.points, least(NEW.matches, rating_places_matches_cap()), 1)
        ON CONFLICT (points, matches) DO UPDATE SET players = p.players + 1;
    END IF;
    RETURN NULL;
END
$$;

CREATE FUNCTION count_period_places() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        UPDATE period_places SET players = players - 1
        WHERE period = OLD.period AND starts = OLD.starts AND minus_score2 = -OLD.score2
          AND matches = OLD.matches;
    END IF;
    IF TG_OP IN ('UPDATE', 'INSERT') THEN
        INSERT INTO period_places AS p (period, starts, minus_score2, matches, players)
        VALUES (NEW.period, NEW.starts, -NEW.score2, NEW.matches, 1)
        ON CONFLICT (period, starts, minus_score2, matches)
        DO UPDATE SET players = p.players + 1;
    END IF;
    RETURN NULL;
END
$$;

CREATE FUNCTION clear_places() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_TABLE_NAME = 'ratings' THEN
        TRUNCATE rating_places;
    ELSE
        TRUNCATE period_places;
    END IF;
    RETURN NULL;
END
$$;

-- Taking these triggers locks the counted tables against writes until this migration commits,
-- so the counts below start from rows nobody is changing.
CREATE TRIGGER ratings_places AFTER INSERT OR DELETE ON ratings
    FOR EACH ROW EXECUTE FUNCTION count_rating_places();
CREATE TRIGGER ratings_places_moved AFTER UPDATE OF points, matches ON ratings
    FOR EACH ROW
    WHEN (OLD.points <> NEW.points
          OR least(OLD.matches, rating_places_matches_cap())
             <> least(NEW.matches, rating_places_matches_cap()))
    EXECUTE FUNCTION count_rating_places();
CREATE TRIGGER ratings_places_cleared AFTER TRUNCATE ON ratings
    FOR EACH STATEMENT EXECUTE FUNCTION clear_places();

CREATE TRIGGER period_scores_places AFTER INSERT OR DELETE ON period_scores
    FOR EACH ROW EXECUTE FUNCTION count_period_places();
CREATE TRIGGER period_scores_places_moved AFTER UPDATE OF score2, matches ON period_scores
    FOR EACH ROW
    WHEN (OLD.score2 <> NEW.score2 OR OLD.matches <> NEW.matches)
    EXECUTE FUNCTION count_period_places();
CREATE TRIGGER period_scores_places_cleared AFTER TRUNCATE ON period_scores
    FOR EACH STATEMENT EXECUTE FUNCTION clear_places();

INSERT INTO rating_places (points, matches, players)
SELECT points, least(matches, rating_places_matches_cap()), count(*)
FROM ratings GROUP BY 1, 2;

INSERT INTO period_places (period, starts, minus_score2, matches, players)
SELECT period, starts, -score2, matches, count(*)
FROM period_scores GROUP BY 1, 2, 3, 4;
