-- Report "Turn boundaries": gaps after a final reply, per truth (human / automatic / tool result:
-- queries/store/truth_macros.sql, the column errors are counted by), on a log grid.
-- Records that start a request and have a trustworthy gap. Input: turn_boundaries, scope_sessions.
WITH edges AS (SELECT unnest([0.0, 0.25, 0.5, 1, 1.5, 2, 3, 5, 8, 13, 21, 30, 60, 300, 3600]::DOUBLE[]) AS lo),
bins AS (SELECT lo, lead(lo) OVER (ORDER BY lo) AS hi FROM edges),
r AS (SELECT truth(origin, is_human_turn) AS truth, gap_s FROM turn_boundaries SEMI JOIN scope_sessions USING (session_id)
      WHERE starts_request AND prev_reply_status = 'final' AND gap_s IS NOT NULL)
SELECT b.lo, b.hi, o.truth, count(r.gap_s) AS n
FROM bins b CROSS JOIN (SELECT DISTINCT truth FROM r) o
LEFT JOIN r ON r.truth = o.truth AND r.gap_s >= b.lo AND (b.hi IS NULL OR r.gap_s < b.hi)
GROUP BY ALL ORDER BY o.truth, b.lo;
