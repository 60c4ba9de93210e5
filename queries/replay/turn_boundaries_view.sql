-- The view `turn_boundaries`: turn_boundaries_narrow (queries/replay/turn_boundaries.sql) with the decisions
-- computed from its columns, in the column order of the table the view replaced. Two views: turn_boundaries_by_seq
-- holds the previous reply as its seq (prev_seq, as stored), turn_boundaries (the last statement) its event id
-- in that place, read from events by (session_id, seq) (seq is unique in a session: ingest numbers it).
-- Plain SQL (no stallscan macro), so the view reads in any DuckDB that opens the database. Decision order (the router's):
--   1. header:     an x-initiator value (user -> human, agent -> continuation)
--   2. first:      no earlier assistant reply in the session -> human (a fresh conversation)
--   3. completion: previous reply not final (empty / truncated / cancelled / failed / tool_calls) -> continuation
--   4. gap:        after a final reply, gap_s >= threshold -> human, else continuation
--      no_time:    after a final reply but no trustworthy gap (gap_raw_s NULL or negative) -> human
-- gap-only: ignores completion reports (NULL when the log gives no gap); header-only: NULL when no header.
-- Each policy's error: not_request for a record that is not a model request of its own (not judged), NULL
-- when the policy could not decide, auto_as_human / human_as_auto when it disagrees with the truth, else none.
CREATE OR REPLACE VIEW turn_boundaries_by_seq AS
WITH c AS (  -- the stored codes out of the one BIGINT that holds them, a byte each (0: NULL; turn_boundaries.sql)
    SELECT session_id, seq, event_id, ts, prev_seq, gap_raw_s, threshold,
           -- (bit 58: extra holds the JSON object of the row's uncoded values and its initiator, else the initiator)
           CASE WHEN (codes >> 58) & 1 = 1 THEN extra ->> 'initiator' ELSE extra END AS initiator,
           CASE WHEN (codes >> 58) & 1 = 1 THEN extra END AS uncoded,
           (codes >> 56) & 1 = 1 AS human_content, (codes >> 57) & 1 = 1 AS starts_request,
           nullif(codes & 255, 0)::UTINYINT AS origin,
           nullif((codes >> 8) & 255, 0)::UTINYINT AS source_format,
           nullif((codes >> 16) & 255, 0)::UTINYINT AS "role",
           nullif((codes >> 24) & 255, 0)::UTINYINT AS kind,
           nullif((codes >> 32) & 255, 0)::UTINYINT AS origin_rule,
           nullif((codes >> 40) & 255, 0)::UTINYINT AS ts_quality,
           nullif((codes >> 48) & 255, 0)::TINYINT AS prev_status
    FROM turn_boundaries_narrow
), n AS (  -- the stored codes as the strings they stand for (the lists of turn_boundaries.sql; uncoded: any other value)
    -- (inside this SELECT, origin, kind, ... name the codes of c: a table's column binds before a select alias)
    SELECT session_id, seq, event_id, ts, prev_status, initiator, human_content, starts_request, prev_seq,
           gap_raw_s, threshold,
           coalesce(['human', 'automatic', 'tool_result'][origin], uncoded ->> 'origin') AS origin,
           -- (origin = 'human' on the code: no string made where only is_human_turn is read)
           CASE WHEN origin IS NOT NULL THEN origin = 1 ELSE (uncoded ->> 'origin') = 'human' END AS is_human,
           coalesce(['claude_code', 'codex', 'openai_chat', 'cline_api', 'cline_ui', 'gemini_cli', 'gemini_cli_json',
                     'gemini_cli_history', 'copilot_cli', 'openhands', 'swe_agent', 'hermes_traj', 'aider',
                     'aider_input', 'opencode', 'opencode_run', 'stallscan_guard', 'otlp', 'otlp_doc',
                     'phoenix_spans', 'litellm'][source_format], uncoded ->> 'source_format') AS source_format,
           coalesce(['user', 'tool']["role"], uncoded ->> 'role') AS "role",
           coalesce(['message', 'tool_result', 'queued_input', 'context', 'turn_start', 'turn_end',
                     'turn_aborted', 'compaction', 'system'][kind], uncoded ->> 'kind') AS kind,
           coalesce(['default_human', 'tool_result'][origin_rule], uncoded ->> 'origin_rule') AS origin_rule,
           coalesce(['per_message', 'per_flush', 'per_session', 'none'][ts_quality], uncoded ->> 'ts_quality')
               AS ts_quality
    FROM c
), d AS (
    SELECT n.*,
           CASE WHEN n.gap_raw_s >= 0 THEN n.gap_raw_s END AS gap_s,
           ['truncated', 'cancelled', 'failed', 'tool_calls', 'empty', 'final'][n.prev_status] AS prev_reply_status,
           n.is_human OR n.human_content AS is_human_turn,
           CASE WHEN n.initiator IN ('user', 'agent') THEN 'header'
                WHEN n.prev_status IS NULL THEN 'first'
                WHEN n.prev_status <> 6 THEN 'completion'
                WHEN n.gap_raw_s IS NULL OR n.gap_raw_s < 0 THEN 'no_time'
                ELSE 'gap' END AS decided_by
    FROM n
), p AS (
    SELECT d.*,
           CASE decided_by WHEN 'header' THEN (CASE initiator WHEN 'user' THEN 'human' ELSE 'continuation' END)
                           WHEN 'first' THEN 'human'
                           WHEN 'completion' THEN 'continuation'
                           WHEN 'no_time' THEN 'human'
                           ELSE (CASE WHEN gap_s >= threshold THEN 'human' ELSE 'continuation' END) END AS decision,
           CASE WHEN prev_status IS NULL THEN 'human'
                WHEN gap_s IS NOT NULL THEN (CASE WHEN gap_s >= threshold THEN 'human' ELSE 'continuation' END)
                END AS gap_only_decision,
           CASE initiator WHEN 'user' THEN 'human' WHEN 'agent' THEN 'continuation' END AS header_only_decision
    FROM d
)
SELECT session_id, seq, event_id, ts, gap_s, prev_reply_status, initiator, decided_by, decision, origin,
       is_human_turn,
       CASE WHEN NOT starts_request THEN 'not_request' WHEN decision IS NULL THEN NULL
            WHEN is_human_turn AND decision = 'continuation' THEN 'human_as_auto'
            WHEN NOT is_human_turn AND decision = 'human' THEN 'auto_as_human' ELSE 'none' END AS "error",
       gap_only_decision,
       CASE WHEN NOT starts_request THEN 'not_request' WHEN gap_only_decision IS NULL THEN NULL
            WHEN is_human_turn AND gap_only_decision = 'continuation' THEN 'human_as_auto'
            WHEN NOT is_human_turn AND gap_only_decision = 'human' THEN 'auto_as_human' ELSE 'none' END
           AS gap_only_error,
       header_only_decision,
       CASE WHEN NOT starts_request THEN 'not_request' WHEN header_only_decision IS NULL THEN NULL
            WHEN is_human_turn AND header_only_decision = 'continuation' THEN 'human_as_auto'
            WHEN NOT is_human_turn AND header_only_decision = 'human' THEN 'auto_as_human' ELSE 'none' END
           AS header_only_error,
       source_format, "role", kind, origin_rule, human_content, starts_request, prev_seq, gap_raw_s,
       ts_quality, threshold
FROM p;
