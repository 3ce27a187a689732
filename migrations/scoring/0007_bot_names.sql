-- The name the table gave each seat's bot (`bots/{level}-{seat}`, as the table service names it),
-- so a match's seats show a bot by its own name and level, as the table shows it, rather than
-- as a nameless `bot`. Null for a person or a free seat. `seat_bots` still says which seats a bot
-- occupies (a bot standing in for a player who left is not one).
ALTER TABLE matches
    ADD COLUMN seat_bot_names text[] NOT NULL DEFAULT ARRAY[NULL, NULL, NULL, NULL]::text[]
        CHECK (cardinality(seat_bot_names) = 4);

-- Matches written before: the names from their table's fold (`table_progress.tally`, which has
-- kept each bot seat's name since ratings came), for the seats `seat_bots` marks. A tally kept
-- before that has no names: those bot seats stay nameless (`bot` set, `player` empty).
UPDATE matches m
SET seat_bot_names = ARRAY(
    SELECT CASE WHEN m.seat_bots[e.i] THEN e.name END
    FROM jsonb_array_elements_text(p.tally -> 'bot_names') WITH ORDINALITY AS e(name, i)
    ORDER BY e.i
)
FROM table_progress p
WHERE p.table_id = m.match_id
  AND jsonb_typeof(p.tally -> 'bot_names') = 'array'
  AND jsonb_array_length(p.tally -> 'bot_names') = 4;

-- Every writer names them from now on.
ALTER TABLE matches ALTER COLUMN seat_bot_names DROP DEFAULT;
