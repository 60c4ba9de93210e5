-- Report "Turn boundaries": misclassified turns, worst first. Worst = the gap farthest from the threshold
-- on a log scale (a human swallowed as a continuation 130 s after a tool-call reply, an automatic prompt
-- taken for a person 0.03 s after a final reply); records with no gap at all (session starts, no_time) last.
-- Input: turn_boundaries, scope_sessions, events. Parameter: $limit.
SELECT t.session_id, e.file, e.line, t.ts, t.gap_s, t.prev_reply_status, t.decided_by, t.decision, t.origin,
       t.origin_rule, t.error, t.source_format AS harness,
       left(redact(regexp_replace(coalesce(e.text, ''), '\s+', ' ', 'g')), 160) AS excerpt
FROM turn_boundaries t JOIN events e USING (event_id)
SEMI JOIN scope_sessions s ON s.session_id = t.session_id
WHERE t.error IN ('auto_as_human', 'human_as_auto')
ORDER BY CASE WHEN t.gap_s IS NOT NULL THEN abs(ln(greatest(t.gap_s, 0.001) / greatest(t.threshold, 0.001))) END DESC NULLS LAST,
         t.ts NULLS LAST, t.session_id, t.seq
LIMIT $limit;
