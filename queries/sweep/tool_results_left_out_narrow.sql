-- sweep/tool_results_left_out.sql's row for the whole scope (by = none), read from the stored columns of
-- turn_boundaries_narrow instead of the view turn_boundaries (which decodes every code and computes every
-- policy's decision and error for each tool result: 3M rows at 10M generated events, 0.36 -> 0.24 CPU s).
-- The decisions are the view's (queries/replay/turn_boundaries_view.sql), on the codes of turn_boundaries.sql:
-- origin 3 = tool_result (a listed value is always stored as its code), prev_status 0 = none, 6 = final. A tool
-- result is a human turn only by its human_content (its origin is not human); NULL there: no error counted,
-- as the view's error is then 'none'. The router's call: header -> first (human) -> completion (continuation)
-- -> no_time (human) -> gap (gap >= threshold; no threshold: continuation); gap-only's: first (human), else by
-- the gap when there is one, else undecided (no error).
-- Input: turn_boundaries_narrow, scope_sessions. Output columns: tool_results_left_out.sql's.
WITH r AS (
    SELECT 'all' AS grp, threshold, human_content AS human,
           CASE WHEN initiator IN ('user', 'agent') THEN initiator = 'user'
                WHEN (codes >> 48) & 255 = 0 THEN true
                WHEN (codes >> 48) & 255 <> 6 THEN false
                WHEN gap_raw_s IS NULL OR gap_raw_s < 0 THEN true
                ELSE coalesce(gap_raw_s >= threshold, false) END AS router_human,
           CASE WHEN (codes >> 48) & 255 = 0 THEN true
                WHEN gap_raw_s >= 0 THEN coalesce(gap_raw_s >= threshold, false) END AS gap_only_human
    FROM turn_boundaries_narrow
    WHERE starts_request AND codes & 255 = 3 AND session_id IN (SELECT session_id FROM scope_sessions)
)
SELECT grp,
       any_value(threshold) AS threshold,
       count(*) AS tool_results,
       count(*) FILTER (WHERE NOT human AND router_human) AS router_auto_as_human,
       count(*) FILTER (WHERE human AND NOT router_human) AS router_human_as_auto,
       count(*) FILTER (WHERE NOT human AND gap_only_human) AS gap_only_auto_as_human,
       count(*) FILTER (WHERE human AND NOT gap_only_human) AS gap_only_human_as_auto
FROM r
GROUP BY grp
ORDER BY grp;
