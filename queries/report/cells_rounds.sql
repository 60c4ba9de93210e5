-- Rounds per session, harness and round kind (table round_cells, stallscan.report.summary_cells), for the "Stalls"
-- section's counts. Input: rounds_core (every reply's stored row, queries/replay/stall_rounds.sql); cells_changed (session_id: the sessions to summarise when not $all).
-- Parameter: $all (BOOLEAN: every session, for a full build).
SELECT session_id, source_format, round_kind, count(*) AS n
FROM rounds_core
WHERE $all::BOOLEAN OR session_id IN (SELECT session_id FROM cells_changed)
GROUP BY ALL;
