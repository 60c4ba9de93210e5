-- A file read before that is now empty or in no format stallscan reads (truncated to 0 bytes, rewritten
-- as something else): its rows are replaced with none. Parameter: $file. Runs inside a transaction with the
-- file's `files` row update (plan.py). Output: temp table `emptied` (the sessions the file's events
-- belonged to: logged as changed by store/stamps.py, so derived tables replay them).
CREATE OR REPLACE TEMP TABLE emptied AS
SELECT DISTINCT session_id FROM events WHERE file = $file;

DELETE FROM events WHERE file = $file;
DELETE FROM skipped WHERE file = $file;
DELETE FROM rejects WHERE file = $file;

-- a session whose rows are also in other files keeps seq = 1..n (the order ingest_commit.sql gives:
-- files of one session ordered by their first time, then file, line, part)
UPDATE events SET seq = o.seq
FROM (SELECT event_id,
             row_number() OVER (PARTITION BY session_id ORDER BY file_first, file, line, part)::INTEGER AS seq
      FROM (SELECT event_id, session_id, file, line, part,
                   min(ts) OVER (PARTITION BY session_id, file) AS file_first
            FROM events WHERE session_id IN (SELECT session_id FROM emptied))) o
WHERE events.event_id = o.event_id AND events.seq <> o.seq;
