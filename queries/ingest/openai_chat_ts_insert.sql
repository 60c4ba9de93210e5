-- OpenAI-chat / Hermes: ts_quality of the batch's rows, set at insert (ingest_commit.sql joins batch_tsq):
-- a timestamp shared by several messages of one session is a flush time, counting the session's rows
-- already stored (those this batch replaces excepted). openai_chat_ts_quality.sql then corrects the stored
-- rows a new row shares a time with; rows set here need no UPDATE (DuckDB updates rows its own
-- transaction wrote at a high price). Inputs: batch_keys, held, batch_files, events.
CREATE OR REPLACE TEMP TABLE batch_tsq AS
WITH k AS MATERIALIZED (
    SELECT k.fid, k.line, k.part, k.session_id, k.ts
    FROM batch_keys k LEFT JOIN held h USING (fid)
    WHERE h.fid IS NULL OR k.line < h.from_line
), prior AS (
    SELECT e.session_id, e.ts, count(*) AS n
    FROM events e
    WHERE e.source_format = 'openai_chat' AND e.ts IS NOT NULL AND e.session_id IN (SELECT session_id FROM k)
      AND NOT EXISTS (SELECT 1 FROM batch_files b WHERE b.file = e.file AND e.line >= b.start_line)
    GROUP BY e.session_id, e.ts
)
SELECT k.fid, k.line, k.part,
       CASE WHEN k.ts IS NULL THEN 'none'
            WHEN count(*) OVER (PARTITION BY k.session_id, k.ts) + coalesce(p.n, 0) > 1 THEN 'per_flush'
            ELSE 'per_message' END AS ts_quality
FROM k LEFT JOIN prior p ON p.session_id = k.session_id AND p.ts = k.ts;
