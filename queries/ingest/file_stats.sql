-- Per-file bookkeeping of the files the batches since the last flush wrote (ingest/tx.py: once before each
-- COMMIT and at the end of each pass over the files, not once per batch): line accounting and where a grown
-- file is re-read from. Each file is in one of those batches only (a pass reads a file once).
-- resume_line = first line of the last event, or of the last assistant event if earlier (a reply
-- or a pair that new lines could still extend), or the earlier line the format's fmt_resume names for that
-- event (Codex: the start of the round, whose token count precedes the output), with the context fmt_resume
-- gives for it. Input: tx_files, tx_ctx, tx_resume, tx_held, tx_held_events (the batches' batch_files,
-- fmt_ctx, fmt_resume, held, held_events, gathered by queries/ingest/tx_keep.sql and hold_tail.sql; their fids
-- are unique across the batches), run_tails (run_tails.sql), the variable tx_from (the batches' least
-- start_line). Output: the temp table batch_stats (files_rows.py reads it).
-- The counts are over each file's rows. A file this run read on from a held tail (run_tails: the totals of
-- its rows before start_line, which no batch since has changed) adds them to the counts of its rows from
-- start_line on, so a chunk of a big file is counted over that chunk's rows, not every earlier chunk's
-- (`line >= tx_from` lets DuckDB skip their row groups by their line ranges); any other file is counted
-- over all its rows. The context in force at resume_line (the last session / model / turn named at or
-- before it) is read from this batch's rows (lines >= start_line), falling back to the context the batch
-- started with (fmt_ctx): rows before start_line are unchanged since the last ingest, which stored exactly
-- that context for start_line. A file read on in a next chunk whose tail was held back (hold_tail.sql:
-- held, held_events) resumes where the hold starts; its counts are of the rows written, its context is read
-- from the written and the held rows, and `held` tells files_rows.py to book the consumed lines up to the
-- hold only.
CREATE OR REPLACE TEMP TABLE batch_stats AS
WITH kb AS (  -- batch files whose rows before start_line this run counted already
    SELECT b.fid, b.file, b.start_line, t.* EXCLUDE (file) FROM tx_files b JOIN run_tails t USING (file)
), ub AS (
    SELECT b.fid, b.file, b.start_line FROM tx_files b WHERE b.file NOT IN (SELECT file FROM run_tails)
), ev0 AS (
    -- the messages of one multi-message record (part > 0) share its one line: count that line once
    SELECT e.file, coalesce(sum(e.n_records) FILTER (WHERE e.part = 0), 0)
                   + count(DISTINCT e.line) FILTER (WHERE e.part > 0) AS n_event_lines, count(*) AS n_events,
           max(e.last_line) AS max_last, arg_max(e.line, e.last_line) AS max_last_at,
           max(e.line) FILTER (WHERE e.role = 'assistant') AS last_assist
    FROM (SELECT e.file, e.line, e.last_line, e.part, e.n_records, e.role FROM events e JOIN ub ON e.file = ub.file
          UNION ALL
          SELECT e.file, e.line, e.last_line, e.part, e.n_records, e.role
          FROM events e JOIN kb ON e.file = kb.file AND e.line >= kb.start_line
          WHERE e.line >= getvariable('tx_from')) e
    GROUP BY e.file
), ev AS (  -- a held file's earlier rows all precede this batch's (their max_last wins only if greater)
    SELECT b.file, coalesce(ev0.n_event_lines, 0) + coalesce(kb.n_event_lines, 0) AS n_event_lines,
           coalesce(ev0.n_events, 0) + coalesce(kb.n_events, 0) AS n_events,
           greatest(ev0.max_last, kb.max_last) AS max_last,
           CASE WHEN ev0.max_last IS NULL OR kb.max_last > ev0.max_last THEN kb.max_last_at ELSE ev0.max_last_at END
               AS max_last_at,
           greatest(ev0.last_assist, kb.last_assist) AS last_assist
    FROM tx_files b LEFT JOIN ev0 USING (file) LEFT JOIN kb USING (file)
), rl AS (
    SELECT b.file, coalesce(h.from_line, x.from_line, ev.resume_line) AS resume_line, h.from_line IS NOT NULL AS held
    FROM tx_files b LEFT JOIN tx_held h USING (fid)
    LEFT JOIN (SELECT file, least(max_last_at, last_assist) AS resume_line FROM ev) ev USING (file)
    LEFT JOIN tx_resume x ON x.fid = b.fid AND x.line = ev.resume_line  -- a format's earlier re-read start
), cx AS (
    SELECT e.file, arg_max(e.session_id, e.line) AS ctx_session,
           arg_max(e.model, e.line) FILTER (WHERE e.model IS NOT NULL) AS ctx_model,
           arg_max(e.turn_id, e.line) FILTER (WHERE e.turn_id IS NOT NULL) AS ctx_turn
    FROM (SELECT file, line, session_id, model, turn_id FROM events WHERE line >= getvariable('tx_from')
          UNION ALL
          SELECT b.file, h.line, h.session_id, h.model, h.turn_id FROM tx_held_events h JOIN tx_files b USING (fid)) e
    JOIN tx_files b ON e.file = b.file AND e.line >= b.start_line
    JOIN rl ON rl.file = e.file AND e.line <= rl.resume_line
    GROUP BY e.file
), sk AS (
    SELECT file, sum(n)::BIGINT AS n FROM (
        SELECT s.file, count(*) AS n FROM skipped s JOIN ub ON s.file = ub.file GROUP BY s.file
        UNION ALL
        SELECT s.file, count(*) FROM skipped s JOIN kb ON s.file = kb.file AND s.line >= kb.start_line
        WHERE s.line >= getvariable('tx_from') GROUP BY s.file
        UNION ALL
        SELECT file, n_skipped FROM kb) GROUP BY file
), rj AS (
    SELECT file, sum(n)::BIGINT AS n FROM (
        SELECT r.file, count(*) AS n FROM rejects r JOIN ub ON r.file = ub.file GROUP BY r.file
        UNION ALL
        SELECT r.file, count(*) FROM rejects r JOIN kb ON r.file = kb.file AND r.line >= kb.start_line
        WHERE r.line >= getvariable('tx_from') GROUP BY r.file
        UNION ALL
        SELECT file, n_rejects FROM kb) GROUP BY file
)
SELECT b.file,
       (coalesce(ev.n_event_lines, 0) + coalesce(sk.n, 0) + coalesce(rj.n, 0))::INTEGER AS n_lines,
       coalesce(ev.n_event_lines, 0)::INTEGER AS n_event_lines, coalesce(sk.n, 0)::INTEGER AS n_skipped,
       coalesce(rj.n, 0)::INTEGER AS n_rejects, coalesce(ev.n_events, 0)::INTEGER AS n_events, rl.resume_line,
       -- a resume line tx_resume named comes with the context in force there (it may precede every event
       -- of the batch; the batch-end context of tx_ctx would then be wrong)
       CASE WHEN y.fid IS NULL THEN coalesce(cx.ctx_session, c.ctx_session) ELSE y.ctx_session END AS ctx_session,
       CASE WHEN y.fid IS NULL THEN coalesce(cx.ctx_model, c.ctx_model) ELSE y.ctx_model END AS ctx_model,
       CASE WHEN y.fid IS NULL THEN coalesce(cx.ctx_turn, c.ctx_turn) ELSE y.ctx_turn END AS ctx_turn,
       rl.held, ev.max_last, ev.max_last_at, ev.last_assist
FROM tx_files b LEFT JOIN ev USING (file) LEFT JOIN rl USING (file) LEFT JOIN cx USING (file) LEFT JOIN sk USING (file) LEFT JOIN rj USING (file)
LEFT JOIN tx_ctx c USING (fid)
LEFT JOIN tx_resume y ON y.fid = b.fid AND y.from_line = rl.resume_line;
