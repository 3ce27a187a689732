-- The statistics consumer counts each table's events in version order (the message's
-- `Okey-Version` header): a connection lost in the middle of a publish can deliver a table's
-- events out of order, and a hand's openings and penalties must be tallied before its end.

-- The last version counted at each table; NULL for a table counted before versions were kept
-- (its next event is taken as the next one).
ALTER TABLE hand_tallies ADD COLUMN version bigint;

-- Events that came before the versions ahead of them, as published, until those are counted.
CREATE TABLE early_table_events (
    table_id text   NOT NULL,
    version  bigint NOT NULL,
    payload  bytea  NOT NULL,
    PRIMARY KEY (table_id, version)
);
