-- Rows held back from a chunk whose file is read on (batch_files.more). The next chunk re-reads that file
-- from its resume line (file_stats.sql: the first line of the last event, or of the last assistant event
-- if earlier) and would delete every row this chunk wrote from there on. Held back instead, those rows are
-- never written: the ingest transaction, which spans batches, then deletes none of its own rows, and DuckDB
-- writes its appends as whole row groups straight into the database file. (A resume line before the
-- chunk's first line holds nothing back: the next chunk deletes, and the transaction takes the slow path.)
-- Inputs: batch_keys (batch_keys.sql), batch_files, events, run_tails (run_tails.sql). Outputs: held (fid, from_line: the fid's rows at or after
-- from_line are not written, nor its skips and rejects there) and held_events (the held rows' context
-- columns: file_stats.sql reads the context in force at the resume line from them).
-- the resume line file_stats.sql would compute over the file's rows once this chunk is written
CREATE OR REPLACE TEMP TABLE held AS
SELECT b.fid, r.from_line
FROM batch_files b
JOIN (SELECT r.fid, coalesce(x.from_line, r.from_line) AS from_line   -- fmt_resume: where a re-read of that event starts
      FROM (SELECT fid,
                   -- a file this run read on from a held tail: its earlier rows' totals from run_tails
                   -- (run_tails.sql), all before this chunk's rows, instead of a scan of them
                   least(CASE WHEN a.max_last IS NULL OR t.max_last > a.max_last THEN t.max_last_at ELSE a.max_last_at END,
                         greatest(a.last_assist, t.last_assist)) AS from_line
            FROM (SELECT fid, max(last_line) AS max_last, arg_max(line, last_line) AS max_last_at,
                         max(line) FILTER (WHERE role = 'assistant') AS last_assist
                  FROM (SELECT k.fid, k.line, k.last_line, k.role FROM batch_keys k JOIN batch_files b USING (fid) WHERE b.more
                        UNION ALL  -- the file's rows kept from earlier chunks (ingest_commit.sql deletes from start_line on)
                        SELECT b.fid, e.line, e.last_line, e.role
                        FROM events e JOIN batch_files b ON e.file = b.file AND b.more AND e.line < b.start_line
                        WHERE b.file NOT IN (SELECT file FROM run_tails))
                  GROUP BY fid) a
            FULL JOIN (SELECT b.fid, t.max_last, t.max_last_at, t.last_assist
                       FROM batch_files b JOIN run_tails t USING (file) WHERE b.more) t USING (fid)) r
      LEFT JOIN fmt_resume x ON x.fid = r.fid AND x.line = r.from_line) r USING (fid)
WHERE r.from_line >= b.start_line;

CREATE OR REPLACE TEMP TABLE held_events AS
SELECT k.fid, k.line, k.last_line, k.role, k.session_id, k.model, k.turn_id
FROM batch_keys k JOIN held h ON k.fid = h.fid AND k.line >= h.from_line;

-- kept for the flush that books the batch's files (file_stats.sql reads tx_held, tx_held_events: tx_tables.sql)
INSERT INTO tx_held SELECT fid, from_line FROM held;

INSERT INTO tx_held_events SELECT * FROM held_events;
