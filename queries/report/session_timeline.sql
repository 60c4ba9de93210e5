-- One session's timeline: every event with its time, gap, role, origin, the router's decision, the
-- round kind and stall outcome. Inputs: events, user_labels, turn_boundaries, rounds, stalls.
-- Parameter: $session (exact session id). truth / truth_note: queries/store/truth_macros.sql.
SELECT e.seq, e.line, e.ts, b.gap_s, e.role, e.kind,
       l.origin, l.origin_rule, b.decided_by,
       truth(l.origin, coalesce(b.is_human_turn, l.origin = 'human' OR l.human_content)) AS truth,
       truth_note(l.origin, coalesce(b.is_human_turn, l.origin = 'human' OR l.human_content)) AS truth_note, b.decision, b.error,
       r.round_kind, r.signature, s.stall_index, s.outcome AS stall_outcome,
       e.n_tool_calls, e.finish_reason,
       left(redact(regexp_replace(coalesce(e.text, ''), '\s+', ' ', 'g')), 160) AS excerpt
FROM events e
LEFT JOIN user_labels l USING (event_id)
LEFT JOIN turn_boundaries b USING (event_id)
LEFT JOIN rounds r USING (event_id)
LEFT JOIN stalls s USING (event_id)
WHERE e.session_id = $session
ORDER BY e.seq;
