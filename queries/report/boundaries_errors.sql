-- Report "Turn boundaries": misclassified turns, worst first. Worst = the gap farthest from the threshold
-- on a log scale (a human swallowed as a continuation 130 s after a tool-call reply, an automatic prompt
-- taken for a person 0.03 s after a final reply); records with no gap at all (session starts, no_time) last.
-- The $limit worst are picked from turn_boundaries alone; only they are joined to events for the file, line
-- and excerpt (joining first made every error row carry its text: 0.35 s at 1M events). Every turn_boundaries
-- row is an event's (the report refreshes turn_boundaries before it reads it).
-- Input: turn_boundaries, scope_sessions, events. Parameter: $limit. truth / truth_note: store/truth_macros.sql.
WITH worst AS (
    SELECT t.event_id, t.session_id, t.seq, t.ts, t.gap_s, t.prev_reply_status, t.decided_by, t.decision,
           t.origin, t.origin_rule, t.is_human_turn, t.error, t.source_format,
           CASE WHEN t.gap_s IS NOT NULL
                THEN abs(ln(greatest(t.gap_s, 0.001) / greatest(t.threshold, 0.001))) END AS far
    FROM turn_boundaries t
    SEMI JOIN scope_sessions s ON s.session_id = t.session_id
    WHERE t.error IN ('auto_as_human', 'human_as_auto')
    ORDER BY far DESC NULLS LAST, t.ts NULLS LAST, t.session_id, t.seq
    LIMIT $limit
)
SELECT w.session_id, e.file, e.line, w.ts, w.gap_s, w.prev_reply_status, w.decided_by, w.decision, w.origin,
       w.origin_rule, truth(w.origin, w.is_human_turn) AS truth, truth_note(w.origin, w.is_human_turn) AS truth_note,
       w.error, w.source_format AS harness,
       left(redact(regexp_replace(coalesce(e.text, ''), '\s+', ' ', 'g')), 160) AS excerpt
FROM worst w JOIN events e USING (event_id)
ORDER BY w.far DESC NULLS LAST, w.ts NULLS LAST, w.session_id, w.seq;
