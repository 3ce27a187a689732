-- A quick-play ticket's display name, as the player's access token carried it at FindTable, so
-- the table made from it names the seat from the start (CreateTable's `seats[].display_name`).
ALTER TABLE tickets ADD COLUMN display_name text NOT NULL DEFAULT '';
