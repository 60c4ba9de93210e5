-- Report headline: misread turns to show as examples, spread over sessions and harnesses. Each session
-- offers its worst error (the gap farthest from the threshold on a log scale, as boundaries_errors.sql
-- ranks them); sessions are ranked within their harness, and the $k picked are every harness's worst
-- session, then every harness's second, ... (one Cline session with 31 errors no longer fills the list).
-- Input: boundary_misreads (each error with its file, line and excerpt), scope_sessions. Parameter: $k.
-- (An error's truth is human exactly when the router read it as automatic.)
WITH per_session AS (  -- each session's worst error (in_session, far, session_errors: report/cells_misreads.sql)
    SELECT t.event_id, t.session_id, t.seq, t.ts, t.gap_s, t.prev_reply_status, t.decided_by, t.decision,
           t.origin, t.origin_rule, t.error = 'human_as_auto' AS is_human_turn, t.error, t.source_format,
           t.file, t.line, t.excerpt, t.far, t.session_errors
    FROM boundary_misreads t  -- the router's errors, kept per session (report/cells_misreads.sql)
    SEMI JOIN scope_sessions s ON s.session_id = t.session_id
    WHERE t.in_session = 1
),
picked AS (
    SELECT *, row_number() OVER (PARTITION BY source_format
                                 ORDER BY far DESC NULLS LAST, ts NULLS LAST, session_id) AS in_harness
    FROM per_session
    ORDER BY in_harness, far DESC NULLS LAST, ts NULLS LAST, session_id
    LIMIT $k
)
SELECT p.session_id, p.seq, p.file, p.line, p.ts, p.gap_s, p.prev_reply_status, p.decided_by, p.decision,
       p.origin, p.origin_rule, truth(p.origin, p.is_human_turn) AS truth,
       truth_note(p.origin, p.is_human_turn) AS truth_note, p.error, p.source_format AS harness,
       p.session_errors,
       p.excerpt
FROM picked p
ORDER BY p.in_harness, p.far DESC NULLS LAST, p.ts NULLS LAST, p.session_id;
