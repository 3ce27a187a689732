-- The W3C trace context (`traceparent`, `tracestate`) of the FindTable call that opened the
-- ticket: the span that makes its quick-play table links to it, so a FindTable's trace leads to
-- the CreateTable of its table. Empty for tickets opened before this column, or without a trace.
ALTER TABLE tickets ADD COLUMN trace jsonb NOT NULL DEFAULT '{}';
