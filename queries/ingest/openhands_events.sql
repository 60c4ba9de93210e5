-- OpenHands event stream (a JSON array of events, e.g. a saved trajectory; or one event object per file
-- as in the file store sessions/<sid>/events/<n>.json) -> fmt_events + fmt_fates. Input: stage_lines,
-- batch_files. The document is staged whole as line 1; each event is a record numbered 1.. (its
-- 1-based position, not its `id`, which is kept as record_id; `cause` is parent_id).
--   source user + action message         -> user message (text = args.content)
--   source agent + action message        -> assistant message (meta.wait_for_response: the agent hands
--                                           the turn to the human)
--   source agent + other action (run, edit, read, finish, ...) -> assistant message with one tool call
--                                           {tool_call_metadata.tool_call_id, function_name, args}; text =
--                                           args.thought; finish_reason = model_response.choices[0].finish_reason
--                                           (actions of one model response, same model_response.id, merge)
--   observations with a cause (run, edit, read, ...) -> tool tool_result (tool_call_id from the metadata)
--   agent_state_changed / change_agent_state        -> system events (meta.agent_state)
--   "No observation" (observation null)              -> skipped
-- Timestamps are naive local times: read in the zone of the DuckDB variable `naive_tz` (default UTC;
-- `SET VARIABLE naive_tz = 'Europe/Berlin'` before ingest), and the zone used is stated in meta.ts_zone.
CREATE OR REPLACE TEMP TABLE oh_el AS
SELECT fid, x.i::INTEGER AS line, x.e AS e, json_type(x.e) AS etype,
       CASE WHEN json_type(x.e) = 'OBJECT' THEN try(json_transform(x.e, '{
         "id":"BIGINT","timestamp":"VARCHAR","source":"VARCHAR","message":"VARCHAR","action":"VARCHAR",
         "observation":"VARCHAR","content":"VARCHAR","cause":"BIGINT","args":"JSON","extras":"JSON","success":"BOOLEAN",
         "tool_call_metadata":{"function_name":"VARCHAR","tool_call_id":"VARCHAR","total_calls_in_response":"BIGINT",
                               "model_response":{"id":"VARCHAR","model":"VARCHAR","choices":"JSON",
                                                 "usage":{"prompt_tokens":"BIGINT","completion_tokens":"BIGINT"}}}}')) END AS j
FROM (SELECT fid, unnest(list_transform(CASE shape WHEN 'ARRAY' THEN json_extract(txt, '$[*]') ELSE [txt::JSON] END,
                                        lambda e, i: {'i': i, 'e': e})) AS x
      FROM stage_doc WHERE shape IN ('ARRAY', 'OBJECT'));

CREATE OR REPLACE TEMP TABLE fmt_fates AS
SELECT fid, 1 AS line, 'reject' AS fate,
       coalesce(problem, 'not a JSON array') AS label,
       excerpt
FROM stage_doc WHERE NOT blank AND (problem IS NOT NULL OR shape NOT IN ('ARRAY', 'OBJECT'))
UNION ALL
SELECT fid, line,
       CASE WHEN etype <> 'OBJECT' OR j IS NULL OR j.source IS NULL OR (j.action IS NULL AND j.observation IS NULL) THEN 'reject'
            WHEN j.observation = 'null' THEN 'skip'
            ELSE 'event' END,
       CASE WHEN etype <> 'OBJECT' THEN 'not a JSON object'
            WHEN j IS NULL THEN 'malformed event'
            WHEN j.source IS NULL THEN 'missing field: source'
            WHEN j.action IS NULL AND j.observation IS NULL THEN 'missing field: action or observation'
            WHEN j.observation = 'null' THEN 'observation:null'
            ELSE coalesce('action:' || j.action, 'observation:' || j.observation) END,
       CASE WHEN etype <> 'OBJECT' OR j IS NULL OR j.source IS NULL OR (j.action IS NULL AND j.observation IS NULL)
            THEN left(e::VARCHAR, 120) END
FROM oh_el;

CREATE OR REPLACE TEMP TABLE oh_rows AS
SELECT o.fid, o.line, o.j,
       -- file-store layout sessions/<sid>/events/<n>.json: the session folder; else the file stem
       CASE WHEN regexp_matches(f.file, '[/\\]events[/\\][^/\\]+$')
            THEN regexp_extract(f.file, '([^/\\]+)[/\\]events[/\\][^/\\]+$', 1) ELSE f.stem END AS session_id,
       coalesce(getvariable('naive_tz'), 'UTC') AS zone,
       CASE WHEN regexp_matches(o.j.timestamp, '(Z|[+-]\d\d:?\d\d)$') THEN try_cast(o.j.timestamp AS TIMESTAMPTZ)
            ELSE timezone(coalesce(getvariable('naive_tz'), 'UTC'), try_cast(o.j.timestamp AS TIMESTAMP)) END AS ts,
       NOT regexp_matches(coalesce(o.j.timestamp, ''), '(Z|[+-]\d\d:?\d\d)$') AS naive,
       o.j.tool_call_metadata.model_response AS mr,
       CASE WHEN o.j.action IS NOT NULL THEN
         CASE WHEN o.j.source = 'user' THEN 'user'
              WHEN o.j.source = 'agent' THEN 'assistant' ELSE 'system' END
            WHEN o.j.observation = 'agent_state_changed' THEN 'system'
            ELSE 'tool' END AS role
FROM oh_el o JOIN fmt_fates t USING (fid, line) JOIN batch_files f USING (fid)
WHERE t.fate = 'event';

CREATE OR REPLACE TEMP TABLE oh_ev AS
SELECT *,
       CASE WHEN role = 'assistant' AND j.action <> 'message' THEN coalesce(mr.id, 'line:' || line) ELSE 'line:' || line END AS grp,
       last_value(mr.model IGNORE NULLS) OVER (PARTITION BY fid ORDER BY line ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS model_in_force
FROM oh_rows;

CREATE OR REPLACE TEMP TABLE fmt_events AS
SELECT fid, min(line) AS line, max(line) AS last_line, 0 AS part, count(*)::INTEGER AS n_records,
       any_value(session_id) AS session_id, arg_min(ts, line) AS ts, arg_max(ts, line) AS ts_end,
       CASE WHEN count(ts) = 0 THEN 'none' ELSE 'per_message' END AS ts_quality,
       any_value(role) AS role,
       CASE WHEN any_value(role) = 'tool' THEN 'tool_result'
            WHEN any_value(role) IN ('user', 'assistant') AND bool_and(j.action IS NOT NULL) THEN 'message'
            ELSE 'system' END AS kind,
       nullif(string_agg(CASE
            WHEN role = 'tool' THEN coalesce(nullif(j.content, ''), j.message)
            WHEN j.action = 'message' THEN coalesce(j.args ->> '$.content', j.message)
            WHEN role = 'assistant' THEN coalesce(nullif(j.args ->> '$.thought', ''), nullif(j.args ->> '$.final_thought', ''),
                                                  CASE WHEN j.action = 'finish' THEN nullif(j.message, '') END)
            ELSE coalesce(nullif(j.message, ''), j.extras ->> '$.agent_state', j.args ->> '$.agent_state') END,
            chr(10) ORDER BY line), '') AS text,
       coalesce(list({'id': j.tool_call_metadata.tool_call_id,
                      'name': coalesce(j.tool_call_metadata.function_name, j.action),
                      'arguments': CASE WHEN json_type(j.args) = 'OBJECT' THEN json_merge_patch(j.args, '{"thought": null}')::VARCHAR END}
                     ORDER BY line) FILTER (WHERE role = 'assistant' AND j.action <> 'message'), [])
         ::STRUCT(id VARCHAR, name VARCHAR, arguments VARCHAR)[] AS tool_calls,
       CASE WHEN any_value(role) = 'tool' THEN any_value(j.tool_call_metadata.tool_call_id) END AS tool_call_id,
       CASE WHEN any_value(role) = 'assistant' THEN arg_max(mr.choices ->> '$[0].finish_reason', line) END AS finish_reason,
       NULL::VARCHAR AS initiator,
       CASE WHEN any_value(role) = 'assistant' THEN any_value(mr.id) END AS message_id,
       arg_min(j.id::VARCHAR, line) AS record_id, arg_min(j.cause::VARCHAR, line) AS parent_id, NULL::VARCHAR AS turn_id,
       CASE WHEN any_value(role) = 'assistant' THEN coalesce(any_value(mr.model), arg_max(model_in_force, line)) END AS model,
       false AS is_sidechain,
       CASE WHEN any_value(role) = 'assistant' THEN any_value(mr.usage.prompt_tokens) END AS tokens_in,
       CASE WHEN any_value(role) = 'assistant' THEN any_value(mr.usage.completion_tokens) END AS tokens_out,
       json_object('source', any_value(j.source), 'action', any_value(j.action), 'observation', any_value(j.observation),
                   'actions', list(j.action ORDER BY line) FILTER (WHERE j.action IS NOT NULL),
                   'wait_for_response', bool_or(try_cast(j.args ->> '$.wait_for_response' AS BOOLEAN)),
                   'agent_state', any_value(coalesce(j.extras ->> '$.agent_state', j.args ->> '$.agent_state')),
                   'success', any_value(j.success),
                   'exit_code', any_value(try_cast(j.extras ->> '$.metadata.exit_code' AS BIGINT)),
                   'total_calls_in_response', any_value(j.tool_call_metadata.total_calls_in_response),
                   'ts_naive', bool_or(naive), 'ts_zone', any_value(zone)) AS meta
FROM oh_ev
GROUP BY fid, grp;

CREATE OR REPLACE TEMP TABLE fmt_ctx AS
SELECT fid, NULL::VARCHAR AS ctx_session, NULL::VARCHAR AS ctx_model, NULL::VARCHAR AS ctx_turn FROM batch_files;
