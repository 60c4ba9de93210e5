-- Report "Turn boundaries": user-role records left out of the evaluation because they are not a model
-- request of their own, by the rule that labelled them. Input: scoped_boundary_cells().
SELECT source_format AS harness, origin_rule, origin, sum(n)::BIGINT AS n
FROM scoped_boundary_cells()
WHERE NOT starts_request
GROUP BY ALL ORDER BY n DESC, harness, origin_rule;
