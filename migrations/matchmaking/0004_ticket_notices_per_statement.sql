-- Ticket changes are announced once per statement instead of once per row: the matcher claims and
-- finishes tickets in batches (one statement for a whole batch of tables), and a notification per
-- row made every such commit queue a hundred notifications behind PostgreSQL's notify lock. The
-- payload is now the queue keys (`rules_key`) of the changed tickets, separated by spaces, at most
-- 100 per notification (a payload holds under 8000 bytes): a WatchTicket stream reads its ticket
-- again when its own key is named, which covers its own changes and its queue's `players_found`.
-- A statement that changes no row sends nothing.
DROP TRIGGER tickets_notify ON tickets;
DROP FUNCTION notify_ticket();

CREATE FUNCTION notify_tickets() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    keys text;
BEGIN
    FOR keys IN
        SELECT string_agg(k.rules_key, ' ')
        FROM (SELECT d.rules_key, (row_number() OVER (ORDER BY d.rules_key) - 1) / 100 AS part
              FROM (SELECT DISTINCT rules_key FROM changed) d) k
        GROUP BY k.part
    LOOP
        PERFORM pg_notify('okey_tickets', keys);
    END LOOP;
    RETURN NULL;
END $$;

-- A trigger with a transition table names one event, hence two.
CREATE TRIGGER tickets_notify_insert AFTER INSERT ON tickets
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION notify_tickets();
CREATE TRIGGER tickets_notify_update AFTER UPDATE ON tickets
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION notify_tickets();
