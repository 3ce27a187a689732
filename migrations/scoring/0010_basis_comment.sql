-- The engine's reckoning now says why another seat's score is multiplied ("the finish's
-- multiplier"): the column's comment, docs/analytics.md's text word for word, shows it.
COMMENT ON COLUMN analytics.ledger.basis IS
    '`hand_score`: the engine''s reckoning, e.g. `opened with melds: rack 23 x 2 (the finish''s multiplier) = 46`, or `hand cancelled: 0`; null when the hand could not be re-verified. `floor`: the total before the hand, the hand''s points and the floored total, e.g. `total 0 + hand -101 floored at zero to 0`.';
