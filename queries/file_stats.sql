-- Per-file bookkeeping after a batch commit: line accounting and where a grown file is re-read from.
-- resume_line = first line of the last event, or of the last assistant event if earlier (a reply
-- or a pair that new lines could still extend). Input: batch_files, fmt_ctx.
WITH ev AS (
    -- the messages of one multi-message record (part > 0) share its one line: count that line once
    SELECT e.file, coalesce(sum(e.n_records) FILTER (WHERE e.part = 0), 0)
                   + count(DISTINCT e.line) FILTER (WHERE e.part > 0) AS n_event_lines, count(*) AS n_events,
           least(arg_max(e.line, e.last_line), max(e.line) FILTER (WHERE e.role = 'assistant')) AS resume_line
    FROM events e JOIN batch_files b ON e.file = b.file GROUP BY e.file
), sk AS (
    SELECT s.file, count(*) AS n FROM skipped s JOIN batch_files b ON s.file = b.file GROUP BY s.file
), rj AS (
    SELECT r.file, count(*) AS n FROM rejects r JOIN batch_files b ON r.file = b.file GROUP BY r.file
)
SELECT b.file,
       (coalesce(ev.n_event_lines, 0) + coalesce(sk.n, 0) + coalesce(rj.n, 0))::INTEGER AS n_lines,
       coalesce(ev.n_event_lines, 0)::INTEGER, coalesce(sk.n, 0)::INTEGER, coalesce(rj.n, 0)::INTEGER,
       coalesce(ev.n_events, 0)::INTEGER, ev.resume_line,
       coalesce((SELECT arg_max(x.session_id, x.line) FROM events x WHERE x.file = b.file AND x.line <= ev.resume_line),
                c.ctx_session),
       coalesce((SELECT arg_max(x.model, x.line) FILTER (WHERE x.model IS NOT NULL) FROM events x
                  WHERE x.file = b.file AND x.line <= ev.resume_line), c.ctx_model),
       coalesce((SELECT arg_max(x.turn_id, x.line) FILTER (WHERE x.turn_id IS NOT NULL) FROM events x
                  WHERE x.file = b.file AND x.line <= ev.resume_line), c.ctx_turn)
FROM batch_files b LEFT JOIN ev USING (file) LEFT JOIN sk USING (file) LEFT JOIN rj USING (file)
LEFT JOIN fmt_ctx c USING (fid);
