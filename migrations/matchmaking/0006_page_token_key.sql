-- The key that seals page tokens (okey_platform::page_token): made once by the first replica
-- that starts, shared by every replica, so a token one gave is taken by another and after a
-- restart. Never shown to anyone; not readable by the analyst role.
CREATE TABLE page_token_key (
    id  smallint PRIMARY KEY CHECK (id = 1),
    key bytea NOT NULL CHECK (length(key) = 32)
);
