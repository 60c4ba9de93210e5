-- Rounds per session, harness and round kind (table round_cells, stallscan.report.summary_cells), for the "Stalls"
-- section's counts. Input: rounds_core (every reply's stored row, queries/replay/stall_rounds.sql); cells_changed (session_id: the sessions to summarise when not $all).
-- Parameter: $all (BOOLEAN: every session, for a full build).
-- Counted by the stored codes, each group's codes then read as the strings they stand for (the lists of
-- queries/replay/stall_rounds.sql; uncoded: a value no list holds).
SELECT session_id,
       coalesce(['claude_code', 'codex', 'openai_chat', 'cline_api', 'cline_ui', 'gemini_cli', 'gemini_cli_json',
                 'gemini_cli_history', 'copilot_cli', 'openhands', 'swe_agent', 'hermes_traj', 'aider',
                 'aider_input', 'opencode', 'opencode_run', 'stallscan_guard', 'otlp', 'otlp_doc',
                 'phoenix_spans', 'litellm'][nullif(sf, 0)], uncoded_sf) AS source_format,
       coalesce(['tool_round', 'final', 'dropped_tool_call', 'no_tool', 'narrated_intent', 'empty', 'truncated',
                 'cancelled', 'failed'][nullif(rk, 0)], uncoded_rk) AS round_kind,
       sum(n)::BIGINT AS n
FROM (
    SELECT session_id, (codes >> 8) & 255 AS sf, codes & 255 AS rk,
           CASE WHEN (codes >> 8) & 255 = 0 THEN uncoded ->> 'source_format' END AS uncoded_sf,
           CASE WHEN codes & 255 = 0 THEN uncoded ->> 'round_kind' END AS uncoded_rk, count(*) AS n
    FROM rounds_core
    WHERE $all::BOOLEAN OR session_id IN (SELECT session_id FROM cells_changed)
    GROUP BY ALL
)
GROUP BY ALL;
