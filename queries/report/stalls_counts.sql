-- Report "Stalls": counts per harness: rounds by round_kind, stalls by outcome, turns by outcome, stalls by
-- signature (the rows of replay/stall_counts.sql, from the per-session cells: report/cells_stalls.sql).
-- Input: round_cells, turn_cells, stalls, scoped() (report/scoped_events.sql). Columns: harness, what, key, n.
SELECT source_format AS harness, 'round_kind' AS what, round_kind AS key, sum(n)::BIGINT AS n
FROM scoped('round_cells') GROUP BY ALL
UNION ALL
SELECT source_format, 'stall_outcome', outcome, count(*)
FROM scoped('stalls') GROUP BY ALL
UNION ALL
SELECT source_format, 'turn_outcome', outcome, sum(n)::BIGINT
FROM scoped('turn_cells') GROUP BY ALL
UNION ALL
SELECT source_format, 'signature', signature, count(*)
FROM scoped('stalls') GROUP BY ALL
ORDER BY harness, what, n DESC, key;
