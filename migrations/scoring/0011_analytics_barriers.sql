-- Hands still being played stay hidden from every condition an analyst writes: a view that hides
-- rows is a security barrier, so PostgreSQL applies a query's own (possibly leaky) conditions
-- only to the rows the view shows (a condition that raised an error on a hidden row told it was
-- there). And the comments of two columns say what the tables hold (docs/analytics.md's text,
-- word for word): each deal has its own hand number, and `ranked` is set when the match ends.
ALTER VIEW analytics.hands SET (security_barrier = true);
ALTER VIEW analytics.ledger SET (security_barrier = true);
ALTER VIEW analytics.seat_hands SET (security_barrier = true);

COMMENT ON COLUMN analytics.ledger.hand_number IS
    '1-based, one number per deal: a cancelled deal keeps its own and the re-deal takes the next (a cancelled hand does not count toward the match''s length).';
COMMENT ON COLUMN analytics.hands.hand_number IS
    '1-based, one number per deal: a cancelled deal keeps its own and the re-deal takes the next (a cancelled hand does not count toward the match''s length).';
COMMENT ON COLUMN analytics.seat_hands.hand_number IS
    '1-based, one number per deal: a cancelled deal keeps its own and the re-deal takes the next (a cancelled hand does not count toward the match''s length).';
COMMENT ON COLUMN analytics.ledger.ranked IS
    'The match counts in standings (not a private room''s, not bots only); set when the match ends, false while it is played.';
COMMENT ON COLUMN analytics.hands.ranked IS
    'The match counts in standings (not a private room''s, not bots only); set when the match ends, false while it is played.';
COMMENT ON COLUMN analytics.matches.ranked IS
    'The match counts in standings (not a private room''s, not bots only); set when the match ends, false while it is played.';
