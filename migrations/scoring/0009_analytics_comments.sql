-- What each analytics view and column holds, as database comments, so `\d+ analytics.<view>` shows
-- an analyst what docs/analytics.md says (the text is that page's, word for word; keep them the
-- same, and comment a column added to a view). A migration that recreates a view loses its
-- comments: it must set them again.

COMMENT ON VIEW analytics.matches IS
    'One row per match.';
COMMENT ON COLUMN analytics.matches.match_id IS
    'The match (= the table''s id).';
COMMENT ON COLUMN analytics.matches.origin IS
    'How the table was made: `operator`, `quick_play` or `private_room`.';
COMMENT ON COLUMN analytics.matches.preset IS
    'The match''s preset (`classic`, `yudum`, …).';
COMMENT ON COLUMN analytics.matches.partners IS
    'Played as two teams of partners (seats 0, 2 against seats 1, 3).';
COMMENT ON COLUMN analytics.matches.ranked IS
    'The match counts in standings (not a private room''s, not bots only); set when it ends.';
COMMENT ON COLUMN analytics.matches.draw IS
    'Nobody won; null while played.';
COMMENT ON COLUMN analytics.matches.created_at IS
    'When the table stored the match''s creation.';
COMMENT ON COLUMN analytics.matches.started_at IS
    'When the first hand was dealt; null before.';
COMMENT ON COLUMN analytics.matches.ended_at IS
    'When the match ended; null while played.';
COMMENT ON COLUMN analytics.matches.totals IS
    'Final total per seat (element `seat + 1`); null while played.';
COMMENT ON COLUMN analytics.matches.winners IS
    'The winning seats (lowest total): one, or both partners; empty on a draw.';

COMMENT ON VIEW analytics.hands IS
    'One row per ended deal.';
COMMENT ON COLUMN analytics.hands.match_id IS
    'The match (= the table''s id).';
COMMENT ON COLUMN analytics.hands.dealt_version IS
    'Table version of the deal: identifies one deal.';
COMMENT ON COLUMN analytics.hands.hand_number IS
    '1-based; a cancelled deal and its re-deal share the number.';
COMMENT ON COLUMN analytics.hands.preset IS
    'The match''s preset (`classic`, `yudum`, …).';
COMMENT ON COLUMN analytics.hands.partners IS
    'Played as two teams of partners (seats 0, 2 against seats 1, 3).';
COMMENT ON COLUMN analytics.hands.ranked IS
    'The match counts in standings (not a private room''s, not bots only).';
COMMENT ON COLUMN analytics.hands.first_seat IS
    'The seat that played first in the deal (0–3).';
COMMENT ON COLUMN analytics.hands.indicator IS
    'The indicator tile, as tile text.';
COMMENT ON COLUMN analytics.hands.outcome IS
    '`finished`, `pile_empty` or `cancelled`.';
COMMENT ON COLUMN analytics.hands.winner_seat IS
    'The seat that finished; null when nobody finished.';
COMMENT ON COLUMN analytics.hands.multiplier IS
    'The finish multiplier (1 when nobody finished).';
COMMENT ON COLUMN analytics.hands.scores IS
    'End-of-hand score per seat.';
COMMENT ON COLUMN analytics.hands.penalties IS
    'Standing in-play penalties per seat (penalties minus voids).';
COMMENT ON COLUMN analytics.hands.totals_after IS
    'Match total per seat after the deal.';
COMMENT ON COLUMN analytics.hands.seed_sha256 IS
    'Hex SHA-256 of the seed''s 32 bytes, announced at the deal.';
COMMENT ON COLUMN analytics.hands.seed IS
    'The deal''s seed (hex), revealed when the hand ended.';
COMMENT ON COLUMN analytics.hands.verified IS
    'Scoring re-derived the deal and found every published number.';
COMMENT ON COLUMN analytics.hands.verify_problem IS
    'The first difference re-verification found; null if none.';
COMMENT ON COLUMN analytics.hands.dealt_at IS
    'When the table stored the deal.';
COMMENT ON COLUMN analytics.hands.ended_at IS
    'When the table stored the hand''s end.';

COMMENT ON VIEW analytics.ledger IS
    'One row per charge to one seat (penalty, void, hand score, floor) of a deal that ended; a seat''s points add up to its match total.';
COMMENT ON COLUMN analytics.ledger.entry_id IS
    'Increases with every entry written.';
COMMENT ON COLUMN analytics.ledger.event_id IS
    'The table event it came from.';
COMMENT ON COLUMN analytics.ledger.table_version IS
    'That event''s version in the table''s stream.';
COMMENT ON COLUMN analytics.ledger.match_id IS
    'The match (= the table''s id).';
COMMENT ON COLUMN analytics.ledger.hand_number IS
    '1-based; a cancelled deal and its re-deal share the number.';
COMMENT ON COLUMN analytics.ledger.dealt_version IS
    'Table version of the deal: identifies one deal.';
COMMENT ON COLUMN analytics.ledger.seat IS
    '0–3.';
COMMENT ON COLUMN analytics.ledger.team IS
    '0 (seats 0, 2) or 1 (seats 1, 3) at a partners table, else null.';
COMMENT ON COLUMN analytics.ledger.player_id IS
    '`players/{id}`; null for a bot''s seat.';
COMMENT ON COLUMN analytics.ledger.kind IS
    '`penalty`, `void`, `hand_score` or `floor`.';
COMMENT ON COLUMN analytics.ledger.reason IS
    '`penalty`/`void`: RULES.md''s code (`wrong_opening`, `discard_okey`, `discard_playable`, `side_discard_opening`, `okey_retrieved`, `table_rollback`); `hand_score`: the seat''s end state (`finished`, `partner_finished`, `never_opened`, `opened_melds`, `opened_pairs`, `cancelled`); `floor`: `floor_totals_at_zero`.';
COMMENT ON COLUMN analytics.ledger.points IS
    'Positive is bad; a void is minus the penalty it voids.';
COMMENT ON COLUMN analytics.ledger.penalty_id IS
    '`penalty`/`void`: the engine''s number of the penalty in its hand.';
COMMENT ON COLUMN analytics.ledger.voided_by IS
    '`void`: `table_rolled_back` or `hand_cancelled`.';
COMMENT ON COLUMN analytics.ledger.multiplier IS
    '`hand_score`: the finish multiplier.';
COMMENT ON COLUMN analytics.ledger.basis IS
    '`hand_score`: the engine''s reckoning, e.g. `opened with melds: rack 23 x 2 = 46`, or `hand cancelled: 0`; null when the hand could not be re-verified. `floor`: the total before the hand, the hand''s points and the floored total, e.g. `total 0 + hand -101 floored at zero to 0`.';
COMMENT ON COLUMN analytics.ledger.event_time IS
    'When the table stored the event.';
COMMENT ON COLUMN analytics.ledger.iso_week IS
    '`event_time`''s ISO week in UTC, e.g. `2026-W49`.';
COMMENT ON COLUMN analytics.ledger.preset IS
    'The match''s preset (`classic`, `yudum`, …).';
COMMENT ON COLUMN analytics.ledger.ranked IS
    'The match counts in standings (not a private room''s, not bots only).';

COMMENT ON VIEW analytics.seat_hands IS
    'One row per seat per ended deal: how the seat stood at the end and what the deal cost it.';
COMMENT ON COLUMN analytics.seat_hands.match_id IS
    'The match (= the table''s id).';
COMMENT ON COLUMN analytics.seat_hands.dealt_version IS
    'Table version of the deal: identifies one deal.';
COMMENT ON COLUMN analytics.seat_hands.hand_number IS
    '1-based; a cancelled deal and its re-deal share the number.';
COMMENT ON COLUMN analytics.seat_hands.preset IS
    'The match''s preset (`classic`, `yudum`, …).';
COMMENT ON COLUMN analytics.seat_hands.seat IS
    '0–3.';
COMMENT ON COLUMN analytics.seat_hands.team IS
    '0 (seats 0, 2) or 1 (seats 1, 3) at a partners table, else null.';
COMMENT ON COLUMN analytics.seat_hands.player_id IS
    '`players/{id}`; null for a bot''s seat.';
COMMENT ON COLUMN analytics.seat_hands.end_state IS
    'The seat''s end state: the reason of its `hand_score` row in `analytics.ledger`.';
COMMENT ON COLUMN analytics.seat_hands.hand_score IS
    'The seat''s end-of-hand score.';
COMMENT ON COLUMN analytics.seat_hands.penalties IS
    'Standing in-play penalties: penalties minus voids.';
COMMENT ON COLUMN analytics.seat_hands.points IS
    'Everything the deal cost the seat, floor included.';

COMMENT ON VIEW analytics.match_results IS
    'One row per person per ended match.';
COMMENT ON COLUMN analytics.match_results.match_id IS
    'The match (= the table''s id).';
COMMENT ON COLUMN analytics.match_results.player_id IS
    '`players/{id}`.';
COMMENT ON COLUMN analytics.match_results.seat IS
    '0–3.';
COMMENT ON COLUMN analytics.match_results.total IS
    'The seat''s final total (lower is better).';
COMMENT ON COLUMN analytics.match_results.won IS
    'The seat is among the winners.';
COMMENT ON COLUMN analytics.match_results.ranked IS
    'The match counts in standings (not a private room''s, not bots only).';
COMMENT ON COLUMN analytics.match_results.ended_at IS
    'When the match ended.';
COMMENT ON COLUMN analytics.match_results.display_name IS
    'The name the player sat down with, if the table knew it.';

COMMENT ON VIEW analytics.ratings IS
    'One row per rated player: the current rating.';
COMMENT ON COLUMN analytics.ratings.player_id IS
    '`players/{id}`.';
COMMENT ON COLUMN analytics.ratings.rating IS
    'Weng-Lin''s mean on the 1500 scale.';
COMMENT ON COLUMN analytics.ratings.uncertainty IS
    'The rating''s standard deviation; 500 for a new player.';
COMMENT ON COLUMN analytics.ratings.points IS
    'The rating rounded, as shown.';
COMMENT ON COLUMN analytics.ratings.matches IS
    'Rated matches played.';
COMMENT ON COLUMN analytics.ratings.wins IS
    'Rated matches won.';
COMMENT ON COLUMN analytics.ratings.last_ended_at IS
    'When the player''s last rated match ended.';

COMMENT ON VIEW analytics.rating_changes IS
    'One row per person per rated match: the rating before and after.';
COMMENT ON COLUMN analytics.rating_changes.match_id IS
    'The match (= the table''s id).';
COMMENT ON COLUMN analytics.rating_changes.seat IS
    '0–3.';
COMMENT ON COLUMN analytics.rating_changes.player_id IS
    '`players/{id}`.';
COMMENT ON COLUMN analytics.rating_changes.ended_at IS
    'When the match ended.';
COMMENT ON COLUMN analytics.rating_changes.rating_before IS
    'The player''s rating before the match.';
COMMENT ON COLUMN analytics.rating_changes.uncertainty_before IS
    'Its standard deviation before the match.';
COMMENT ON COLUMN analytics.rating_changes.rating_after IS
    'The player''s rating after the match.';
COMMENT ON COLUMN analytics.rating_changes.uncertainty_after IS
    'Its standard deviation after the match.';
COMMENT ON COLUMN analytics.rating_changes.change IS
    '`rating_after` − `rating_before`.';
COMMENT ON COLUMN analytics.rating_changes.partners IS
    'Played as two teams of partners (seats 0, 2 against seats 1, 3).';

-- PUBLIC's TEMPORARY on this database: temporary tables were the one thing the analyst role
-- could create here. Revoked from PUBLIC (the database's owner keeps it) when the migrating user
-- owns the database or is a superuser; otherwise the owner runs it (docs/analytics.md).
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_database
               WHERE datname = current_database() AND pg_has_role(current_user, datdba, 'USAGE'))
       OR EXISTS (SELECT 1 FROM pg_roles WHERE rolname = current_user AND rolsuper) THEN
        EXECUTE format('REVOKE TEMPORARY ON DATABASE %I FROM PUBLIC', current_database());
    ELSE
        RAISE NOTICE 'TEMPORARY on database % not revoked from PUBLIC (not its owner); see docs/analytics.md',
            current_database();
    END IF;
END
$$;
