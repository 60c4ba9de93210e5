-- The tool results the threshold sweep leaves out (sweep_input.sql scores prompts only), with the errors the
-- router and gap-only make on them at the replayed threshold. The router decides a tool result by the reply
-- before it (not final: a continuation), so no threshold moves it; gap-only calls a tool result a new human
-- turn whenever its gap reaches the threshold, errors the sweep's gap-only row does not count.
-- Input: turn_boundaries, scope_sessions, events. Parameter: $by (harness / source_format / model / none).
SELECT CASE $by WHEN 'model' THEN coalesce(m.model, '(unknown)')
                WHEN 'none' THEN 'all' ELSE b.source_format END AS grp,
       any_value(b.threshold) AS threshold,
       count(*) AS tool_results,
       count(*) FILTER (WHERE b.error = 'auto_as_human') AS router_auto_as_human,
       count(*) FILTER (WHERE b.error = 'human_as_auto') AS router_human_as_auto,
       count(*) FILTER (WHERE b.gap_only_error = 'auto_as_human') AS gap_only_auto_as_human,
       count(*) FILTER (WHERE b.gap_only_error = 'human_as_auto') AS gap_only_human_as_auto
FROM turn_boundaries_by_seq b
LEFT JOIN (SELECT session_id, arg_max(model, seq) FILTER (WHERE model IS NOT NULL) AS model
           FROM events GROUP BY session_id) m USING (session_id)
WHERE b.starts_request AND b.origin = 'tool_result' AND b.session_id IN (SELECT session_id FROM scope_sessions)
GROUP BY ALL
ORDER BY grp;
