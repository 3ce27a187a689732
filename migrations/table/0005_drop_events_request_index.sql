-- `events_request` indexed every event by (stream, request id) but nothing reads events that way:
-- a retried request is answered from `handled_commands`, which maps the request id to the
-- versions it appended (`first_version`..`last_version`). Dropping it spares one index update
-- per stored event. `events.request_id` stays, for support queries.
DROP INDEX IF EXISTS events_request;
