-- Per-file bookkeeping after a batch commit: line accounting and where a grown file is re-read from.
-- resume_line = first line of the last event, or of the last assistant event if earlier (a reply
-- or a pair that new lines could still extend), or the earlier line the format's fmt_resume names for that
-- event (Codex: the start of the round, whose token count precedes the output), with the context fmt_resume
-- gives for it. Input: batch_files, fmt_ctx, fmt_resume.
-- One pass over each file's rows for the counts; the context in force at resume_line (the last
-- session / model / turn named at or before it) is read from this batch's rows (lines >= start_line),
-- falling back to the context the batch started with (fmt_ctx): rows before start_line are unchanged
-- since the last ingest, which stored exactly that context for start_line. A file read on in a next
-- chunk whose tail was held back (hold_tail.sql: held, held_events) resumes where the hold starts; its
-- counts are of the rows written, its context is read from the written and the held rows, and `held`
-- tells files_rows.py to book the consumed lines up to the hold only.
WITH ev AS (
    -- the messages of one multi-message record (part > 0) share its one line: count that line once
    SELECT e.file, coalesce(sum(e.n_records) FILTER (WHERE e.part = 0), 0)
                   + count(DISTINCT e.line) FILTER (WHERE e.part > 0) AS n_event_lines, count(*) AS n_events,
           least(arg_max(e.line, e.last_line), max(e.line) FILTER (WHERE e.role = 'assistant')) AS resume_line
    FROM events e JOIN batch_files b ON e.file = b.file GROUP BY e.file
), rl AS (
    SELECT b.file, coalesce(h.from_line, x.from_line, ev.resume_line) AS resume_line, h.from_line IS NOT NULL AS held
    FROM batch_files b LEFT JOIN held h USING (fid) LEFT JOIN ev USING (file)
    LEFT JOIN fmt_resume x ON x.fid = b.fid AND x.line = ev.resume_line  -- a format's earlier re-read start
), cx AS (
    SELECT e.file, arg_max(e.session_id, e.line) AS ctx_session,
           arg_max(e.model, e.line) FILTER (WHERE e.model IS NOT NULL) AS ctx_model,
           arg_max(e.turn_id, e.line) FILTER (WHERE e.turn_id IS NOT NULL) AS ctx_turn
    FROM (SELECT file, line, session_id, model, turn_id FROM events
          UNION ALL
          SELECT b.file, h.line, h.session_id, h.model, h.turn_id FROM held_events h JOIN batch_files b USING (fid)) e
    JOIN batch_files b ON e.file = b.file AND e.line >= b.start_line
    JOIN rl ON rl.file = e.file AND e.line <= rl.resume_line
    GROUP BY e.file
), sk AS (
    SELECT s.file, count(*) AS n FROM skipped s JOIN batch_files b ON s.file = b.file GROUP BY s.file
), rj AS (
    SELECT r.file, count(*) AS n FROM rejects r JOIN batch_files b ON r.file = b.file GROUP BY r.file
)
SELECT b.file,
       (coalesce(ev.n_event_lines, 0) + coalesce(sk.n, 0) + coalesce(rj.n, 0))::INTEGER AS n_lines,
       coalesce(ev.n_event_lines, 0)::INTEGER, coalesce(sk.n, 0)::INTEGER, coalesce(rj.n, 0)::INTEGER,
       coalesce(ev.n_events, 0)::INTEGER, rl.resume_line,
       -- a resume line fmt_resume named comes with the context in force there (it may precede every event
       -- of the batch; the batch-end context of fmt_ctx would then be wrong)
       CASE WHEN y.fid IS NULL THEN coalesce(cx.ctx_session, c.ctx_session) ELSE y.ctx_session END,
       CASE WHEN y.fid IS NULL THEN coalesce(cx.ctx_model, c.ctx_model) ELSE y.ctx_model END,
       CASE WHEN y.fid IS NULL THEN coalesce(cx.ctx_turn, c.ctx_turn) ELSE y.ctx_turn END,
       rl.held
FROM batch_files b LEFT JOIN ev USING (file) LEFT JOIN rl USING (file) LEFT JOIN cx USING (file) LEFT JOIN sk USING (file) LEFT JOIN rj USING (file)
LEFT JOIN fmt_ctx c USING (fid)
LEFT JOIN fmt_resume y ON y.fid = b.fid AND y.from_line = rl.resume_line;
