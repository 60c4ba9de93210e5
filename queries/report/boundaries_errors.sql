-- Report "Turn boundaries": misclassified turns, worst first. Worst = the gap farthest from the threshold
-- on a log scale (a human swallowed as a continuation 130 s after a tool-call reply, an automatic prompt
-- taken for a person 0.03 s after a final reply); records with no gap at all (session starts, no_time) last.
-- The $limit worst are picked from boundary_misreads (report/cells_misreads.sql: the router's errors, kept
-- per session with their event's file, line and excerpt, so no event is read here). Every row is an event's
-- (the report refreshes turn_boundaries and its cells before it reads them).
-- Input: boundary_misreads, scoped() (report/scoped_events.sql). Parameter: $limit. truth / truth_note: store/truth_macros.sql
-- (an error's truth is human exactly when the router read it as automatic).
WITH worst AS (
    SELECT t.event_id, t.session_id, t.seq, t.ts, t.gap_s, t.prev_reply_status, t.decided_by, t.decision,
           t.origin, t.origin_rule, t.error, t.source_format, t.file, t.line, t.excerpt, t.far
    FROM scoped('boundary_misreads') t
    ORDER BY far DESC NULLS LAST, t.ts NULLS LAST, t.session_id, t.seq
    LIMIT $limit
)
SELECT w.session_id, w.file, w.line, w.ts, w.gap_s, w.prev_reply_status, w.decided_by, w.decision, w.origin,
       w.origin_rule, truth(w.origin, w.error = 'human_as_auto') AS truth,
       truth_note(w.origin, w.error = 'human_as_auto') AS truth_note, w.error, w.source_format AS harness,
       w.excerpt
FROM worst w
ORDER BY w.far DESC NULLS LAST, w.ts NULLS LAST, w.session_id, w.seq;
