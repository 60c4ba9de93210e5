-- Replace the rows of the batch's files from each file's start line on, then insert the new rows.
-- Inputs: batch_files (fid, file, stem, fmt, start_line), fmt_events, fmt_fates. Runs inside one
-- transaction with the `files` upsert, so a file's events, skips, rejects and bookkeeping land together.
-- sessions whose rows are about to be replaced or removed (logged as changed, with `touched`, below)
CREATE OR REPLACE TEMP TABLE removed AS
SELECT DISTINCT e.session_id FROM events e JOIN batch_files b ON e.file = b.file AND e.line >= b.start_line;

DELETE FROM events e USING batch_files b WHERE e.file = b.file AND e.line >= b.start_line;
DELETE FROM skipped s USING batch_files b WHERE s.file = b.file AND s.line >= b.start_line;
DELETE FROM rejects r USING batch_files b WHERE r.file = b.file AND r.line >= b.start_line;

INSERT INTO events
SELECT md5(b.file || '#' || e.line || '#' || e.part) AS event_id, b.fmt, b.file, e.line, e.last_line, e.part,
       e.n_records, e.session_id, 0 AS seq, e.ts, e.ts_end, e.ts_quality, e.role, e.kind, e.text,
       coalesce(e.tool_calls, []), len(coalesce(e.tool_calls, [])), e.tool_call_id, e.finish_reason,
       finish_norm(e.finish_reason), e.initiator, e.message_id, e.record_id, e.parent_id, e.turn_id, e.model,
       e.is_sidechain, e.tokens_in, e.tokens_out, e.meta
FROM fmt_events e JOIN batch_files b USING (fid);

INSERT INTO skipped
SELECT b.file, f.line, f.label FROM fmt_fates f JOIN batch_files b USING (fid) WHERE f.fate = 'skip';

INSERT INTO rejects
SELECT b.file, f.line, f.label, f.excerpt FROM fmt_fates f JOIN batch_files b USING (fid) WHERE f.fate = 'reject';

-- seq: file order inside each touched session (files of one session ordered by their first time)
CREATE OR REPLACE TEMP TABLE touched AS   -- from the rows just written (fmt_events may be a costly view)
SELECT DISTINCT e.session_id FROM events e JOIN batch_files b ON e.file = b.file AND e.line >= b.start_line;

UPDATE events SET seq = o.seq
FROM (SELECT event_id,
             row_number() OVER (PARTITION BY session_id ORDER BY file_first, file, line, part)::INTEGER AS seq
      FROM (SELECT event_id, session_id, file, line, part,
                   min(ts) OVER (PARTITION BY session_id, file) AS file_first
            FROM events WHERE session_id IN (SELECT session_id FROM touched))) o
WHERE events.event_id = o.event_id AND events.seq <> o.seq;
