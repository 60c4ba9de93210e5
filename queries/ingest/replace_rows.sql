-- Delete the rows of the batch's files from each file's start line on: the batch's rows (ingest_commit.sql,
-- run next) replace them. Inputs: batch_files (fid, file, start_line) and the variable batch_from (its least
-- start_line: `line >= batch_from` lets DuckDB skip the row groups of earlier chunks of a big file by their
-- line ranges). Output: the temp table `removed` (the sessions of the deleted rows: logged as changed with
-- those of the rows written). Runs inside the ingest transaction; batch.py skips it for a batch of files
-- that had no `files` row when the run planned them (rows are only ever written with their file's row).
-- the sessions whose rows are about to be replaced or removed
CREATE OR REPLACE TEMP TABLE removed AS
SELECT DISTINCT e.session_id FROM events e JOIN batch_files b ON e.file = b.file AND e.line >= b.start_line
WHERE e.line >= getvariable('batch_from');

DELETE FROM events e USING batch_files b WHERE e.file = b.file AND e.line >= b.start_line AND e.line >= getvariable('batch_from');
DELETE FROM skipped s USING batch_files b WHERE s.file = b.file AND s.line >= b.start_line AND s.line >= getvariable('batch_from');
DELETE FROM rejects r USING batch_files b WHERE r.file = b.file AND r.line >= b.start_line AND r.line >= getvariable('batch_from');
