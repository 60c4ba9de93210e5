-- Report "Turn boundaries": why records after a final reply had no trustworthy gap (decided_by no_time).
-- Input: boundary_cells (report/cells_boundaries.sql: no_time_reason), scope_sessions.
SELECT no_time_reason AS reason, starts_request, sum(n)::BIGINT AS n
FROM boundary_cells SEMI JOIN scope_sessions USING (session_id)
WHERE decided_by = 'no_time'
GROUP BY ALL ORDER BY n DESC, reason;
