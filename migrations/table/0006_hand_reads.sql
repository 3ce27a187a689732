-- The audit log of hand histories read with role `support` (GetHandHistory), listed by
-- ListHandReads: who read which hand of which table, from which version, and when. Rows are only
-- ever added.
CREATE TABLE hand_reads (
    read_id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    -- `players/{id}` of the support token.
    reader       text NOT NULL,
    table_id     uuid NOT NULL,
    hand_number  integer NOT NULL,
    -- The first version the read served (its page).
    from_version bigint NOT NULL,
    -- The hand was still being played.
    live         boolean NOT NULL,
    read_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX hand_reads_by_table ON hand_reads (table_id, read_id);
