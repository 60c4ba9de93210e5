-- A file read before that is now empty or in no format stallscan reads (truncated to 0 bytes, rewritten
-- as something else): its rows are replaced with none. Parameter: $file. Runs inside a transaction with the
-- file's `files` row update (plan.py). Output: temp table `emptied` (the sessions the file's events
-- belonged to: logged as changed by store/stamps.py, so derived tables replay them).
CREATE OR REPLACE TEMP TABLE emptied AS
SELECT DISTINCT session_id FROM events WHERE file = $file;

DELETE FROM events WHERE file = $file;
DELETE FROM skipped WHERE file = $file;
DELETE FROM rejects WHERE file = $file;

-- its sessions' rows in other files are numbered 1..n again (renumber_seq.sql, run next)
CREATE OR REPLACE TEMP TABLE seq_fix AS SELECT session_id FROM emptied;
