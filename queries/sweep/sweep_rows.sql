-- Table macro sweep_rows(): the rows the sweep scores (sweep_input.sql's filter: every user-role event that
-- is not a tool result and starts a model request), each with the router's and each rule variant's deciding
-- step and whether it called the event human, computed straight from the stored columns of
-- turn_boundaries_narrow (previous reply's status code, initiator, gap_raw_s, threshold; the codes read out of
-- its column `codes`) and
-- turn_boundary_variants_marked, not through the view turn_boundaries (which computes every policy's
-- decision and error for every row). The router's order is the view's (queries/replay/turn_boundaries_view.sql):
-- header -> first -> completion -> gap / no_time. A row the variants did not store is decided by every
-- variant as the router decides it (queries/replay/turn_boundaries_variants.sql).
-- Read by sweep_bins_input.sql; uses the macros of sweep_picks.sql (run first). The tables resolve through
-- the search path when the macro is called (a scratch schema holding only the changed sessions,
-- stallscan.replay.derive).
CREATE OR REPLACE TEMP MACRO sweep_rows() AS TABLE
WITH r AS (
    SELECT n.session_id, n.seq, n.gap_raw_s, n.human_content, n.prev_status,
           -- (the stored codes decoded as the view turn_boundaries decodes them: queries/replay/turn_boundaries_view.sql)
           coalesce(['claude_code', 'codex', 'openai_chat', 'cline_api', 'cline_ui', 'gemini_cli', 'gemini_cli_json',
                     'gemini_cli_history', 'copilot_cli', 'openhands', 'swe_agent', 'hermes_traj', 'aider',
                     'aider_input', 'opencode', 'opencode_run', 'stallscan_guard', 'otlp', 'otlp_doc',
                     'phoenix_spans', 'litellm'][n.source_format], n.uncoded ->> 'source_format') AS source_format,
           -- (origin = 'human', origin_rule = 'default_human' on the codes, as the strings would answer)
           CASE WHEN n.origin IS NOT NULL THEN n.origin = 1 ELSE (n.uncoded ->> 'origin') = 'human' END AS is_human,
           CASE WHEN n.origin_rule IS NOT NULL THEN n.origin_rule = 1
                ELSE coalesce(n.uncoded ->> 'origin_rule', '') IN ('default_human', '') END AS by_fallback,
           CASE WHEN n.initiator IN ('user', 'agent') THEN 'header'
                WHEN n.prev_status IS NULL THEN 'first'
                WHEN n.prev_status <> 6 THEN 'completion'   -- 6: 'final'
                WHEN n.gap_raw_s IS NULL OR n.gap_raw_s < 0 THEN 'no_time'
                ELSE 'gap' END AS step,
           -- (first and no_time call it human, completion a continuation, gap by the threshold)
           CASE WHEN n.initiator IN ('user', 'agent') THEN n.initiator = 'user'
                WHEN n.prev_status = 6 AND n.gap_raw_s >= 0 THEN n.gap_raw_s >= n.threshold
                ELSE n.prev_status IS NULL OR n.prev_status = 6 END AS called_human,
           v.event_id IS NOT NULL AS marked, v.marker_decided_by, v.marker_decision, v.notif_decided_by,
           v.notif_decision, v.both_decided_by, v.both_decision
    -- (the codes it reads out of the one BIGINT that holds them, a byte each, 0: NULL; turn_boundaries.sql)
    FROM (SELECT session_id, seq, event_id, gap_raw_s, threshold,
                 (codes >> 56) & 1 = 1 AS human_content, (codes >> 57) & 1 = 1 AS starts_request,
                 CASE WHEN (codes >> 58) & 1 = 1 THEN extra ->> 'initiator' ELSE extra END AS initiator,
                 CASE WHEN (codes >> 58) & 1 = 1 THEN extra END AS uncoded,
                 nullif(codes & 255, 0) AS origin, nullif((codes >> 8) & 255, 0) AS source_format,
                 nullif((codes >> 32) & 255, 0) AS origin_rule, nullif((codes >> 48) & 255, 0) AS prev_status
          FROM turn_boundaries_narrow) n
    LEFT JOIN turn_boundary_variants_marked v USING (event_id)
    WHERE n.starts_request
      AND CASE WHEN n.origin IS NOT NULL THEN n.origin <> 3 ELSE (n.uncoded ->> 'origin') <> 'tool_result' END
)
SELECT session_id, seq, source_format,
       coalesce(is_human OR human_content, false) AS human,   -- is_human_turn
       step AS decided_by,
       coalesce(called_human, false) AS decided_human,
       coalesce(CASE WHEN gap_raw_s >= 0 THEN gap_raw_s END, 'NaN'::DOUBLE) AS gap_s,
       prev_status IS NULL AS first_in_session,
       by_fallback,
       sweep_pick_step(marked, marker_decided_by, step) AS marker_decided_by,
       sweep_pick_human(marked, marker_decision, called_human) AS marker_decided_human,
       sweep_pick_step(marked, notif_decided_by, step) AS notif_decided_by,
       sweep_pick_human(marked, notif_decision, called_human) AS notif_decided_human,
       sweep_pick_step(marked, both_decided_by, step) AS both_decided_by,
       sweep_pick_human(marked, both_decision, called_human) AS both_decided_human
FROM r;
