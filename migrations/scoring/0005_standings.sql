-- Standings kept at write time: per period (all time, and each UTC day, ISO week and month) and
-- player, the ranked matches played and won and the sum of the seat's final totals, updated in
-- the transaction of the `match_ended` (ListStandings ranked every match result of the period on
-- every call). The order of the standings (matches won, more first; mean total, lower first;
-- matches played, more first; then player id) is one ascending key, so a page is one index range
-- and a place is 1 + one index range count.
CREATE TABLE standings (
    period       text NOT NULL CHECK (period IN ('all', 'day', 'week', 'month')),
    starts       timestamptz NOT NULL,
    player_id    text NOT NULL,
    played       bigint NOT NULL CHECK (played > 0),
    won          bigint NOT NULL,
    total_sum    bigint NOT NULL,
    minus_won    bigint GENERATED ALWAYS AS (-won) STORED,
    mean         float8 GENERATED ALWAYS AS (total_sum::float8 / played) STORED,
    minus_played bigint GENERATED ALWAYS AS (-played) STORED,
    PRIMARY KEY (period, starts, player_id)
);
CREATE INDEX standings_order
    ON standings (period, starts, minus_won, mean, minus_played, player_id);

-- The match results recorded before this migration.
INSERT INTO standings (period, starts, player_id, played, won, total_sum)
SELECT p.period,
       CASE p.period WHEN 'all' THEN 'epoch'::timestamptz
                     ELSE date_trunc(p.period, r.ended_at, 'UTC') END AS starts,
       r.player_id, count(*), count(*) FILTER (WHERE r.won), sum(r.total)
FROM match_results r
CROSS JOIN (VALUES ('all'), ('day'), ('week'), ('month')) AS p (period)
WHERE r.ranked
GROUP BY 1, 2, 3;
