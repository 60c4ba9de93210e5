-- Report "Turn boundaries": user-role events (and tool results) by harness and origin, in scope.
-- Input: scoped_boundary_cells() (report/scoped_boundary_cells.sql: boundary_cells, or their sums, in scope).
SELECT source_format AS harness, origin,
       sum(n)::BIGINT AS records,
       coalesce(sum(n) FILTER (WHERE starts_request), 0)::BIGINT AS requests,
       coalesce(sum(n) FILTER (WHERE NOT starts_request), 0)::BIGINT AS not_requests,
       coalesce(sum(n) FILTER (WHERE human_content), 0)::BIGINT AS human_content
FROM scoped_boundary_cells()
GROUP BY ALL ORDER BY harness, origin;
