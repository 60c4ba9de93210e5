-- Report headline: misread turns to show as examples, spread over sessions and harnesses. Each session
-- offers its worst error (the gap farthest from the threshold on a log scale, as boundaries_errors.sql
-- ranks them); sessions are ranked within their harness, and the $k picked are every harness's worst
-- session, then every harness's second, ... (one Cline session with 31 errors no longer fills the list).
-- Input: boundary_misreads (each error with its file, line and excerpt), scoped() (report/scoped_events.sql). Parameter: $k.
-- (An error's truth is human exactly when the router read it as automatic.) The sessions are ranked on the few
-- columns the ranking needs; the $k picked are joined back for their other columns (carrying every session's
-- excerpt through the window cost 0.022 against 0.013 CPU s at 1M events).
WITH per_session AS (  -- each session's worst error (in_session, far: report/cells_misreads.sql)
    SELECT t.session_id, t.source_format, t.far, t.ts
    FROM scoped('boundary_misreads') t  -- the router's errors, kept per session (report/cells_misreads.sql)
    WHERE t.in_session = 1
),
picked AS (
    SELECT *, row_number() OVER (PARTITION BY source_format
                                 ORDER BY far DESC NULLS LAST, ts NULLS LAST, session_id) AS in_harness
    FROM per_session
    ORDER BY in_harness, far DESC NULLS LAST, ts NULLS LAST, session_id
    LIMIT $k
)
SELECT t.session_id, t.seq, t.file, t.line, t.ts, t.gap_s, t.prev_reply_status, t.decided_by, t.decision,
       t.origin, t.origin_rule, truth(t.origin, t.error = 'human_as_auto') AS truth,
       truth_note(t.origin, t.error = 'human_as_auto') AS truth_note, t.error, t.source_format AS harness,
       t.session_errors,
       t.excerpt
FROM picked p
JOIN boundary_misreads t ON t.session_id = p.session_id AND t.in_session = 1
ORDER BY p.in_harness, p.far DESC NULLS LAST, p.ts NULLS LAST, p.session_id;
