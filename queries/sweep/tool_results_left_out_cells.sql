-- The tool results the threshold sweep leaves out, counted as sweep/tool_results_left_out.sql counts them, from
-- the report's per-session counts of the turn-boundary replay (table boundary_cells, stallscan.report.
-- summary_cells: n records per session and combination of origin, request or not, each policy's error) instead
-- of every tool-result row of turn_boundaries (300k rows at 1M events). The caller brings boundary_cells up to
-- date with turn_boundaries first. The threshold is turn_boundaries' (one replay: the same in every row).
-- Input: scoped_boundary_cells() (report/scoped_boundary_cells.sql), turn_boundaries. Parameter: $by (source_format / none).
SELECT CASE $by WHEN 'none' THEN 'all' ELSE c.source_format END AS grp,
       any_value(t.threshold) AS threshold,
       sum(c.n)::BIGINT AS tool_results,
       coalesce(sum(c.n) FILTER (WHERE c.error = 'auto_as_human'), 0)::BIGINT AS router_auto_as_human,
       coalesce(sum(c.n) FILTER (WHERE c.error = 'human_as_auto'), 0)::BIGINT AS router_human_as_auto,
       coalesce(sum(c.n) FILTER (WHERE c.gap_only_error = 'auto_as_human'), 0)::BIGINT AS gap_only_auto_as_human,
       coalesce(sum(c.n) FILTER (WHERE c.gap_only_error = 'human_as_auto'), 0)::BIGINT AS gap_only_human_as_auto
FROM scoped_boundary_cells() c
CROSS JOIN (SELECT threshold FROM turn_boundaries_by_seq LIMIT 1) t
WHERE c.starts_request AND c.origin = 'tool_result'
GROUP BY ALL
ORDER BY grp;
