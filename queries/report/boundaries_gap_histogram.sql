-- Report "Turn boundaries": gaps after a final reply, per truth (human / automatic / tool result:
-- queries/store/truth_macros.sql, the column errors are counted by), on a log grid (the edges below are the ones
-- report/cells_boundaries.sql bins hist_lo by). Records that start a request and have a trustworthy gap.
-- Input: scoped_boundary_cells() (report/scoped_boundary_cells.sql).
WITH edges AS (SELECT unnest([0.0, 0.25, 0.5, 1, 1.5, 2, 3, 5, 8, 13, 21, 30, 60, 300, 3600]::DOUBLE[]) AS lo),
bins AS (SELECT lo, lead(lo) OVER (ORDER BY lo) AS hi FROM edges),
r AS (SELECT truth(origin, is_human_turn) AS truth, hist_lo, n FROM scoped_boundary_cells()
      WHERE hist_lo IS NOT NULL)
SELECT b.lo, b.hi, o.truth, coalesce(sum(r.n), 0)::BIGINT AS n
FROM bins b CROSS JOIN (SELECT DISTINCT truth FROM r) o
LEFT JOIN r ON r.truth = o.truth AND r.hist_lo = b.lo
GROUP BY ALL ORDER BY o.truth, b.lo;
