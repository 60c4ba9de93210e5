-- SWE-agent .traj (one JSON object {environment, trajectory[], history[], info, replay_config}) ->
-- fmt_events + fmt_fates.   Input: stage_lines, batch_files. The document is staged whole as line 1;
-- the records are the elements of `history` (the exact message list sent to the model), numbered 1..
-- (line = position in history). `trajectory[]` repeats the same steps (action / observation / response)
-- and is not a record stream of its own; `info.model_stats` totals go to the meta of the first event.
-- No timestamps anywhere (ts NULL, ts_quality none), no finish reason.
--   system                           -> system context (the system prompt)
--   user before the first assistant  -> user message (the task), or context when is_demo (a demonstration)
--   user after an assistant message  -> user tool_result (old format: every observation is sent as
--                                       role user; meta.observation_as_user = true)
--   tool                             -> tool tool_result (function-calling format; tool_call_id = tool_call_ids[1])
--   assistant                        -> assistant message; tool_calls from `tool_calls` (function calling) or,
--                                       in the old format, the parsed `action` string as one call
--                                       {name: its first word, arguments: the action} (meta.action_from_text)
-- message_type (system_prompt / observation / action), agent and is_demo are kept in meta.
CREATE OR REPLACE TEMP TABLE sw_el AS
SELECT fid, line, e, etype,
       CASE WHEN etype = 'OBJECT' THEN try(json_transform(e, '{
         "role":"VARCHAR","content":"JSON","agent":"VARCHAR","message_type":"VARCHAR","thought":"VARCHAR",
         "action":"VARCHAR","tool_calls":"JSON","tool_call_ids":"VARCHAR[]","is_demo":"BOOLEAN"}')) END AS j
FROM doc_elements('$.history');

CREATE OR REPLACE TEMP TABLE fmt_fates AS
SELECT * FROM doc_rejects('$.history')
UNION ALL
SELECT fid, line,
       CASE WHEN etype <> 'OBJECT' OR j IS NULL OR j.role IS NULL THEN 'reject'
            WHEN j.role IN ('system', 'user', 'assistant', 'tool') THEN 'event' ELSE 'skip' END,
       CASE WHEN etype <> 'OBJECT' THEN 'not a JSON object'
            WHEN j IS NULL THEN 'malformed message'
            WHEN j.role IS NULL THEN 'missing field: role'
            ELSE 'role:' || j.role END,
       CASE WHEN etype <> 'OBJECT' OR j IS NULL OR j.role IS NULL THEN left(e::VARCHAR, 120) END
FROM sw_el;

CREATE OR REPLACE TEMP TABLE sw_rows AS
SELECT e.fid, e.line, e.j, f.stem AS session_id,
       count(*) FILTER (WHERE e.j.role = 'assistant') OVER (PARTITION BY e.fid ORDER BY e.line
                                                              ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS n_assistant_before,
       e.line = min(e.line) OVER (PARTITION BY e.fid) AS first_event,
       CASE WHEN json_type(e.j.tool_calls) = 'ARRAY' THEN try(json_transform(e.j.tool_calls,
         '[{"id":"VARCHAR","function":{"name":"VARCHAR","arguments":"JSON"}}]')) END AS calls
FROM sw_el e JOIN fmt_fates t USING (fid, line) JOIN batch_files f USING (fid)
WHERE t.fate = 'event';

CREATE OR REPLACE TEMP TABLE fmt_events AS
SELECT r.fid, r.line, r.line AS last_line, 0 AS part, 1 AS n_records, r.session_id,
       NULL::TIMESTAMPTZ AS ts, NULL::TIMESTAMPTZ AS ts_end, 'none' AS ts_quality,
       r.j.role AS role,
       CASE WHEN r.j.role = 'system' THEN 'context'
            WHEN r.j.role = 'tool' THEN 'tool_result'
            WHEN r.j.role = 'user' AND coalesce(r.j.is_demo, false) THEN 'context'
            WHEN r.j.role = 'user' AND r.n_assistant_before > 0 THEN 'tool_result'
            ELSE 'message' END AS kind,
       json_text(r.j.content) AS text,
       CASE WHEN r.j.role <> 'assistant' THEN []
            WHEN len(r.calls) > 0 THEN list_transform(r.calls, lambda c: {'id': c.id, 'name': c.function.name,
                 'arguments': CASE WHEN json_type(c.function.arguments) = 'VARCHAR' THEN c.function.arguments ->> '$'
                                   ELSE c.function.arguments::VARCHAR END})
            WHEN nullif(trim(r.j.action), '') IS NOT NULL THEN
                 [{'id': NULL, 'name': split_part(trim(r.j.action), ' ', 1), 'arguments': rtrim(r.j.action, chr(10))}]
            ELSE [] END::STRUCT(id VARCHAR, name VARCHAR, arguments VARCHAR)[] AS tool_calls,
       CASE WHEN r.j.role = 'tool' THEN r.j.tool_call_ids[1] END AS tool_call_id,
       NULL::VARCHAR AS finish_reason, NULL::VARCHAR AS initiator, NULL::VARCHAR AS message_id,
       NULL::VARCHAR AS record_id, NULL::VARCHAR AS parent_id, NULL::VARCHAR AS turn_id,
       CASE WHEN r.j.role = 'assistant' THEN d.txt ->> '$.replay_config.agent.model.name' END AS model,
       false AS is_sidechain, NULL::BIGINT AS tokens_in, NULL::BIGINT AS tokens_out,
       json_object('message_type', r.j.message_type, 'agent', r.j.agent, 'is_demo', r.j.is_demo,
                   'observation_as_user', r.j.role = 'user' AND r.n_assistant_before > 0,
                   'action_from_text', r.j.role = 'assistant' AND coalesce(len(r.calls), 0) = 0
                                       AND nullif(trim(r.j.action), '') IS NOT NULL,
                   'action', CASE WHEN r.j.role = 'assistant' THEN r.j.action END,
                   'exit_status', CASE WHEN r.first_event THEN d.txt ->> '$.info.exit_status' END,
                   'model_stats', CASE WHEN r.first_event THEN d.txt -> '$.info.model_stats' END) AS meta
FROM sw_rows r JOIN stage_doc d USING (fid);

CREATE OR REPLACE TEMP TABLE fmt_ctx AS
SELECT fid, NULL::VARCHAR AS ctx_session, NULL::VARCHAR AS ctx_model, NULL::VARCHAR AS ctx_turn FROM batch_files;
