-- The router's errors (auto_as_human / human_as_auto) per session (table boundary_misreads,
-- stallscan.report.summary_cells), for the worst-first list of report/boundaries_errors.sql.
-- Input: turn_boundaries; cells_changed (session_id: the sessions to summarise when not $all).
-- Parameter: $all (BOOLEAN: every session, for a full build).
SELECT event_id, session_id, seq, ts, gap_s, prev_reply_status, decided_by, decision, origin, origin_rule, error,
       source_format, threshold
FROM turn_boundaries
WHERE error IN ('auto_as_human', 'human_as_auto')
  AND ($all::BOOLEAN OR session_id IN (SELECT session_id FROM cells_changed));
