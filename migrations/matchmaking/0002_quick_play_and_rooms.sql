-- Quick play and private rooms as the matchmaking service runs them. PostgreSQL is the truth:
-- the queue is the searching tickets themselves (no other copy to lose); a group of tickets is
-- taken by one transaction that locks them with FOR UPDATE SKIP LOCKED, records a claim and
-- points the tickets at it, so no ticket is in two groups whatever the number of replicas.

-- The effective rule set, normalised (sha256 of the engine's canonical JSON): tickets are matched
-- when their keys are equal.
ALTER TABLE tickets ADD COLUMN rules_key text NOT NULL DEFAULT '';
-- FindTable's client request id: a retry finds the ticket it opened.
ALTER TABLE tickets ADD COLUMN request_id text;
-- allow_bots only: when the empty seats get bots (expires_at is then the same time).
ALTER TABLE tickets ADD COLUMN fill_at timestamptz;
-- The group this ticket was taken into (see `claims`); NULL while it waits.
ALTER TABLE tickets ADD COLUMN claim_id uuid;
ALTER TABLE tickets ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now();
CREATE UNIQUE INDEX tickets_request ON tickets (player_id, request_id);
CREATE INDEX tickets_queue ON tickets (rules_key, created_at)
    WHERE state = 'searching' AND claim_id IS NULL;
CREATE INDEX tickets_due ON tickets (expires_at) WHERE state = 'searching' AND claim_id IS NULL;
CREATE INDEX tickets_claim ON tickets (claim_id) WHERE claim_id IS NOT NULL;

-- A group taken to become a table: its seats, and the table once the table service made it.
-- The claim's id is CreateTable's request id, so whichever replica finishes it (the one that
-- claimed it, or another after `lease_until` because that one died) gets the same table.
CREATE TABLE claims (
    claim_id    uuid PRIMARY KEY,
    origin      text NOT NULL CHECK (origin IN ('quick_play', 'private_room')),
    rules       jsonb NOT NULL,
    -- Four entries, index = seat: {"player": "players/…"} or {"bot": "easy" | "medium" | "hard" | ""}.
    seats       jsonb NOT NULL,
    room_id     uuid,
    lease_until timestamptz NOT NULL,
    table_name  text,
    created_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX claims_open ON claims (lease_until) WHERE table_name IS NULL;

-- Rooms: an optional password (argon2id, never the text), a public flag for the lobby, whether
-- the table admits spectators, the request id that created it.
ALTER TABLE rooms ADD COLUMN password_hash text;
ALTER TABLE rooms ADD COLUMN public boolean NOT NULL DEFAULT false;
ALTER TABLE rooms ADD COLUMN spectators_allowed boolean NOT NULL DEFAULT false;
ALTER TABLE rooms ADD COLUMN preset text NOT NULL DEFAULT 'classic';
ALTER TABLE rooms ADD COLUMN updated_at timestamptz NOT NULL DEFAULT now();
CREATE INDEX rooms_lobby ON rooms (preset, created_at) WHERE state = 'open' AND public;
CREATE INDEX rooms_due ON rooms (expires_at) WHERE state = 'open';
-- Members who left or were removed keep no row; a started room keeps its members.

-- Every change to a ticket or a room is announced on commit; each replica listens and wakes the
-- streams (WatchTicket, WatchRoom) that follow it. The payload: the id, a space, the queue key.
CREATE FUNCTION notify_ticket() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    PERFORM pg_notify('okey_tickets', NEW.ticket_id::text || ' ' || NEW.rules_key);
    RETURN NULL;
END $$;
CREATE TRIGGER tickets_notify AFTER INSERT OR UPDATE ON tickets
    FOR EACH ROW EXECUTE FUNCTION notify_ticket();

CREATE FUNCTION notify_room() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    room uuid;
BEGIN
    IF TG_OP = 'DELETE' THEN
        room := OLD.room_id;
    ELSE
        room := NEW.room_id;
    END IF;
    PERFORM pg_notify('okey_rooms', room::text);
    RETURN NULL;
END $$;
CREATE TRIGGER rooms_notify AFTER INSERT OR UPDATE ON rooms
    FOR EACH ROW EXECUTE FUNCTION notify_room();
CREATE TRIGGER room_members_notify AFTER INSERT OR UPDATE OR DELETE ON room_members
    FOR EACH ROW EXECUTE FUNCTION notify_room();
