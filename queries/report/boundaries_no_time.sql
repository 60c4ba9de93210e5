-- Report "Turn boundaries": why records after a final reply had no trustworthy gap (decided_by no_time).
-- Input: scoped_boundary_cells() (report/scoped_boundary_cells.sql; no_time_reason: report/cells_boundaries.sql).
SELECT no_time_reason AS reason, starts_request, sum(n)::BIGINT AS n
FROM scoped_boundary_cells()
WHERE decided_by = 'no_time'
GROUP BY ALL ORDER BY n DESC, reason;
