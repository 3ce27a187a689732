-- Skill-aware quick play: each ticket keeps the rating its player had when it was opened (asked
-- of the scoring service; 1500 for a new player or when scoring did not answer), which the
-- matcher's rating windows compare (`matchmaking.rating_windows`, widening with the wait).
ALTER TABLE tickets ADD COLUMN rating integer NOT NULL DEFAULT 1500;
