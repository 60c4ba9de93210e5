-- One session's timeline: every event with its time, gap, role, origin, the router's decision, the
-- round kind and stall outcome. Inputs: events, turn_boundaries, rounds, stalls.
-- Parameter: $session (exact session id). Each derived table is narrowed to the session (by session_id)
-- before its join, so no join reads a whole table: joining the whole tables took 0.1-0.2 s per session at
-- 1M events, and the report asks for a timeline per listed session. The origin comes from turn_boundaries,
-- which holds user_labels' origin and rule for every labelled event (it joins user_labels, and both have a
-- row for every user / tool event); user_labels itself has no session column to narrow it by.
WITH e AS (
    SELECT event_id, seq, line, ts, role, kind, n_tool_calls, finish_reason, text
    FROM events WHERE session_id = $session
)
SELECT e.seq, e.line, e.ts, b.gap_s, e.role, e.kind,
       b.origin, b.origin_rule, b.decided_by, b.decision, b.error,
       r.round_kind, r.signature, s.stall_index, s.outcome AS stall_outcome,
       e.n_tool_calls, e.finish_reason,
       left(redact(regexp_replace(coalesce(e.text, ''), '\s+', ' ', 'g')), 160) AS excerpt
FROM e
LEFT JOIN (SELECT event_id, origin, origin_rule, gap_s, decided_by, decision, error FROM turn_boundaries
           WHERE session_id = $session) b USING (event_id)
LEFT JOIN (SELECT event_id, round_kind, signature FROM rounds WHERE session_id = $session) r USING (event_id)
LEFT JOIN (SELECT event_id, stall_index, outcome FROM stalls WHERE session_id = $session) s USING (event_id)
ORDER BY e.seq;
