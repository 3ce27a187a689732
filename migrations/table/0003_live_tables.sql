-- Live tables: finding the tables being played (to rebuild their deadlines in Redis), and the
-- table chat kept for `live.chat_retention_secs`.

-- A table is being played once a hand was dealt and until the match ended.
CREATE INDEX events_hand_dealt ON events (stream_id) WHERE event_type = 'HandDealt';
CREATE INDEX events_match_ended ON events (stream_id) WHERE event_type = 'MatchEnded';

-- Chat messages: to the whole table (`table`) or to one team only (`team-0`: seats 0 and 2,
-- `team-1`: seats 1 and 3). Deleted by the retention sweep.
CREATE TABLE chat_messages (
    -- Order of acceptance (times may tie).
    seq         bigint GENERATED ALWAYS AS IDENTITY,
    message_id  uuid PRIMARY KEY,
    table_id    uuid NOT NULL,
    channel     text NOT NULL CHECK (channel IN ('table', 'team-0', 'team-1')),
    sender      text NOT NULL,
    sender_seat smallint NOT NULL CHECK (sender_seat BETWEEN 0 AND 3),
    -- The sender's client request id: a retry returns the first message.
    request_id  text NOT NULL,
    body        text NOT NULL,
    sent_at     timestamptz NOT NULL,
    UNIQUE (table_id, sender, request_id)
);
CREATE INDEX chat_messages_by_table ON chat_messages (table_id, seq);
CREATE INDEX chat_messages_by_age ON chat_messages (sent_at);
