-- A room member's display name as their access token carried it when they joined (accounts
-- checked it when it signed the token): shown to the other members instead of the player id.
-- Members who joined before this column have none (shown empty, as the table service does).
ALTER TABLE room_members ADD COLUMN display_name text NOT NULL DEFAULT '';
