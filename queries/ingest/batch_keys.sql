-- The key columns of the batch's events (fmt_events, often a costly view: evaluated here once, narrowly,
-- without text), for hold_tail.sql and for the seq that ingest_commit.sql sets at insert.
CREATE OR REPLACE TEMP TABLE batch_keys AS
SELECT e.fid, e.line, e.last_line, e.part, e.role, e.session_id, e.ts, e.model, e.turn_id
FROM fmt_events e;
