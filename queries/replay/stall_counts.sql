-- Counts per harness: rounds by round_kind, stalls by outcome, turns by outcome, stalls by signature.
-- Input: rounds_narrow (every reply's row: queries/replay/stall_rounds_narrow_view.sql), stalls, turns_by_seq, stall_scope. Columns: harness, what, key, n.
SELECT source_format AS harness, 'round_kind' AS what, round_kind AS key, count(*) AS n
FROM rounds_narrow WHERE session_id IN (SELECT session_id FROM stall_scope) GROUP BY ALL
UNION ALL
SELECT source_format, 'stall_outcome', outcome, count(*)
FROM stalls WHERE session_id IN (SELECT session_id FROM stall_scope) GROUP BY ALL
UNION ALL
SELECT source_format, 'turn_outcome', outcome, count(*)
FROM turns_by_seq WHERE session_id IN (SELECT session_id FROM stall_scope) GROUP BY ALL
UNION ALL
SELECT source_format, 'signature', signature, count(*)
FROM stalls WHERE session_id IN (SELECT session_id FROM stall_scope) GROUP BY ALL
ORDER BY harness, what, n DESC, key;
