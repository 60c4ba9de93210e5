-- Report "Turn boundaries": user-role events (and tool results) by harness and origin, in scope.
-- Input: boundary_cells (report/cells_boundaries.sql), scope_sessions.
SELECT source_format AS harness, origin,
       sum(n)::BIGINT AS records,
       coalesce(sum(n) FILTER (WHERE starts_request), 0)::BIGINT AS requests,
       coalesce(sum(n) FILTER (WHERE NOT starts_request), 0)::BIGINT AS not_requests,
       coalesce(sum(n) FILTER (WHERE human_content), 0)::BIGINT AS human_content
FROM boundary_cells SEMI JOIN scope_sessions USING (session_id)
GROUP BY ALL ORDER BY harness, origin;
