-- Who a partner message was for: the players in the team's seats when it was sent. A reader who
-- sits in that team later (a seat changed hands before the match) does not read it. NULL for
-- table messages, and for partner messages stored before this column (read as before).
ALTER TABLE chat_messages ADD COLUMN recipients text[];
