-- Report "Turn boundaries": truth x decision for the router's policy and the two simpler ones, over the
-- records that start a model request (in scope). decision NULL = the policy could not decide from the log.
-- truth: human / automatic / tool result (queries/store/truth_macros.sql).
-- Input: scoped_boundary_cells() (report/scoped_boundary_cells.sql: boundary_cells, or their sums, in scope).
WITH r AS (SELECT * FROM scoped_boundary_cells() WHERE starts_request)
SELECT 'router' AS policy, origin, truth(origin, is_human_turn) AS truth, decided_by, decision, error, sum(n)::BIGINT AS n FROM r GROUP BY ALL
UNION ALL
SELECT 'gap_only', origin, truth(origin, is_human_turn), NULL, gap_only_decision, gap_only_error, sum(n)::BIGINT FROM r GROUP BY ALL
UNION ALL
SELECT 'header_only', origin, truth(origin, is_human_turn), NULL, header_only_decision, header_only_error, sum(n)::BIGINT FROM r GROUP BY ALL
ORDER BY ALL;
