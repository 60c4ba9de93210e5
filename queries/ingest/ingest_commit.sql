-- Insert the batch's new rows (replace_rows.sql deleted the rows they replace, where a file had any).
-- Inputs: batch_files (fid, file, stem, fmt, start_line), fmt_events, fmt_fates (only its 'skip' and 'reject' rows are
-- read: a reader may leave its event lines out, as claude_code_events.sql does), held (hold_tail.sql: rows
-- a next chunk re-reads, not written here), batch_tsq (a format's ts_quality set at insert, may be empty). Runs inside the ingest transaction; the `files`
-- rows of the batch are written in the same transaction, before its COMMIT (ingest/tx.py), so a file's events,
-- skips, rejects and bookkeeping land together.
-- seq as the final order gives it when the session's kept rows are all in this batch's file, before this
-- batch's rows (the usual case: a file read in order). renumber_seq.sql (run next) re-sequences only the other
-- sessions (seq_fix: rows in several files); in the usual case it changes no row (DuckDB updates rows its
-- own transaction wrote at a high price). Narrow tables: the INSERT joins them, no text goes through a window.
-- A session's first time in each file (file_first) is a GROUP BY joined back, not a second window over the rows, and
-- the files are ordered by their rank in batch_files (frank: the same order as their paths, a batch holding a file
-- once), so the row_number's sort keys are numbers and no path travels with the rows until the end.
CREATE OR REPLACE TEMP TABLE batch_seq AS
WITH k0 AS MATERIALIZED (
    SELECT k.fid, k.line, k.part, k.session_id, k.ts
    FROM batch_keys k LEFT JOIN held h USING (fid)
    WHERE h.fid IS NULL OR k.line < h.from_line
), k AS MATERIALIZED (
    SELECT k0.fid, k0.line, k0.part, k0.session_id, ff.file_first
    FROM k0 JOIN (SELECT session_id, fid, min(ts) AS file_first FROM k0 GROUP BY session_id, fid) ff USING (session_id, fid)
), prior AS (
    SELECT session_id, count(*) AS n FROM events WHERE session_id IN (SELECT session_id FROM k) GROUP BY session_id
)
SELECT k.fid, k.line, k.part, k.session_id, f.file,
       (coalesce(p.n, 0) + row_number() OVER (PARTITION BY k.session_id ORDER BY k.file_first, f.frank, k.line, k.part))::INTEGER AS seq
FROM k JOIN (SELECT fid, file, rank() OVER (ORDER BY file) AS frank FROM batch_files) f USING (fid)
LEFT JOIN prior p USING (session_id);

CREATE OR REPLACE TEMP TABLE seq_fix AS
SELECT session_id FROM (SELECT session_id, file FROM batch_seq
                        UNION SELECT session_id, file FROM events WHERE session_id IN (SELECT session_id FROM batch_seq))
GROUP BY session_id HAVING count(*) > 1;

-- The INSERT joins the wide rows (texts) with narrow tables: the narrow ones must be the hash joins' build
-- sides, as written (fmt_events is often a view whose size the optimizer underestimates; it built the hash
-- table on the texts: 0.13 s of a 64 MB OpenAI batch's 0.39 s INSERT).
SET disabled_optimizers = 'join_order,build_side_probe_side';

INSERT INTO events
SELECT md5(b.file || '#' || e.line || '#' || e.part) AS event_id, b.fmt, b.file, e.line, e.last_line, e.part,
       e.n_records, e.session_id, s.seq, e.ts, e.ts_end, coalesce(q.ts_quality, e.ts_quality), e.role, e.kind, e.text,
       coalesce(e.tool_calls, []), len(coalesce(e.tool_calls, [])), e.tool_call_id, e.finish_reason,
       finish_norm(e.finish_reason), e.initiator, e.message_id, e.record_id, e.parent_id, e.turn_id, e.model,
       e.is_sidechain, e.tokens_in, e.tokens_out, e.meta
FROM fmt_events e JOIN batch_files b USING (fid) JOIN batch_seq s USING (fid, line, part)
LEFT JOIN batch_tsq q USING (fid, line, part);

RESET disabled_optimizers;

INSERT INTO skipped
SELECT b.file, f.line, f.label FROM fmt_fates f JOIN batch_files b USING (fid) LEFT JOIN held h USING (fid)
WHERE f.fate = 'skip' AND (h.fid IS NULL OR f.line < h.from_line);

INSERT INTO rejects
SELECT b.file, f.line, f.label, f.excerpt FROM fmt_fates f JOIN batch_files b USING (fid) LEFT JOIN held h USING (fid)
WHERE f.fate = 'reject' AND (h.fid IS NULL OR f.line < h.from_line);
