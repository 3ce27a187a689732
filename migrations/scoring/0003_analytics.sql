-- The analysts' interface: the `analytics` schema of views over the ledger (documented, column by
-- column, in docs/analytics.md) and the read-only role `okey_analyst`, which may SELECT these
-- views and nothing else. The views run with their owner's rights, so the role needs no grant on
-- the tables under them; hands still being played (their seed unrevealed) are not shown.

CREATE SCHEMA analytics;

CREATE VIEW analytics.matches AS
SELECT match_id, origin, preset, partners, ranked, draw,
       created_at, started_at, ended_at, totals, winners
FROM public.matches;

CREATE VIEW analytics.hands AS
SELECT h.match_id, h.dealt_version, h.hand_number, m.preset, m.partners, m.ranked,
       h.first_seat, h.indicator, h.outcome, h.winner_seat, h.multiplier,
       h.scores, h.penalties, h.totals_after, h.seed_sha256, h.seed,
       h.verified, h.verify_problem, h.dealt_at, h.ended_at
FROM public.hands h JOIN public.matches m USING (match_id)
WHERE h.ended_at IS NOT NULL;

CREATE VIEW analytics.ledger AS
SELECT l.entry_id, l.event_id, l.table_version, l.match_id, l.hand_number, l.dealt_version,
       l.seat, l.team, l.player_id, l.kind, l.reason, l.points, l.penalty_id, l.voided_by,
       l.multiplier, l.basis, l.event_time,
       to_char(l.event_time AT TIME ZONE 'UTC', 'IYYY-"W"IW') AS iso_week,
       m.preset, m.ranked
FROM public.ledger_entries l JOIN public.matches m USING (match_id)
-- Only deals that ended: a hand in progress shows nothing yet.
WHERE EXISTS (SELECT 1 FROM public.hands h
              WHERE h.match_id = l.match_id AND h.dealt_version = l.dealt_version
                AND h.ended_at IS NOT NULL);

-- One row per seat per ended deal: how the seat stood at the end and what the deal cost it.
CREATE VIEW analytics.seat_hands AS
SELECT l.match_id, l.dealt_version, l.hand_number, l.preset, l.seat, l.team, l.player_id,
       max(l.reason) FILTER (WHERE l.kind = 'hand_score') AS end_state,
       sum(l.points) FILTER (WHERE l.kind = 'hand_score') AS hand_score,
       coalesce(sum(l.points) FILTER (WHERE l.kind IN ('penalty', 'void')), 0) AS penalties,
       sum(l.points) AS points
FROM analytics.ledger l
GROUP BY l.match_id, l.dealt_version, l.hand_number, l.preset, l.seat, l.team, l.player_id;

CREATE VIEW analytics.match_results AS
SELECT match_id, player_id, seat, total, won, ranked, ended_at, display_name
FROM public.match_results;

DO $$
BEGIN
    BEGIN
        CREATE ROLE okey_analyst NOLOGIN;
    EXCEPTION
        -- Made by another database's migration on this server (roles are server-wide).
        WHEN duplicate_object OR unique_violation THEN NULL;
        WHEN insufficient_privilege THEN
            RAISE NOTICE 'okey_analyst not created (no CREATEROLE); see docs/analytics.md';
    END;
    IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'okey_analyst') THEN
        REVOKE ALL ON SCHEMA public FROM okey_analyst;
        GRANT USAGE ON SCHEMA analytics TO okey_analyst;
        GRANT SELECT ON ALL TABLES IN SCHEMA analytics TO okey_analyst;
    END IF;
END
$$;
