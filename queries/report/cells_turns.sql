-- Turns per session, harness, model, provider, outcome and whether they had a reply (table turn_cells,
-- stallscan.report.summary_cells), for the "Stalls" section's counts and rates.
-- Input: turns_by_seq; cells_changed (session_id: the sessions to summarise when not $all).
-- Parameter: $all (BOOLEAN: every session, for a full build).
SELECT session_id, source_format, model, provider, outcome, n_rounds > 0 AS with_rounds, count(*) AS n
FROM turns_by_seq
WHERE $all::BOOLEAN OR session_id IN (SELECT session_id FROM cells_changed)
GROUP BY ALL;
