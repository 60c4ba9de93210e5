-- Cline / Roo Code api_conversation_history.json -> fmt_events + fmt_fates.   Input: stage_lines, batch_files.
-- The file is one JSON array (the exact message list sent to the model), staged whole as line 1; each
-- element becomes a record numbered 1.. (line = the element's 1-based position, PROVENANCE's [i] + 1).
-- One event per message. Tool results come back as user messages whose text starts "[<tool> ...] Result:"
-- (or, in Roo Code, as tool_result blocks): kind tool_result, tool_call_id = the previous assistant
-- message's first tool_use id. The harness's trailing <environment_details> block is left out of `text`
-- (meta.environment_details = true); human text inside <task>/<feedback>/<answer>/<user_message> is
-- copied to meta.human_text, and the harness markers ([ERROR] You did not use a tool..., [TASK
-- RESUMPTION]) are flagged in meta for origin labelling. session_id = the task folder name.
CREATE OR REPLACE TEMP TABLE cl_el AS
SELECT * FROM doc_elements('$');

CREATE OR REPLACE TEMP TABLE cl_j AS
SELECT fid, line, e, etype,
       CASE WHEN etype = 'OBJECT' THEN try(json_transform(e, '{"role":"VARCHAR","content":"JSON","ts":"JSON",
         "modelInfo":{"modelId":"VARCHAR","providerId":"VARCHAR","mode":"VARCHAR"},
         "metrics":{"tokens":{"prompt":"BIGINT","completion":"BIGINT","cached":"BIGINT"}}}')) END AS j
FROM cl_el;

CREATE OR REPLACE TEMP TABLE fmt_fates AS
SELECT * FROM doc_rejects('$')
UNION ALL
SELECT fid, line,
       CASE WHEN etype <> 'OBJECT' OR j IS NULL OR j.role IS NULL THEN 'reject'
            WHEN j.role IN ('user', 'assistant') THEN 'event' ELSE 'skip' END,
       CASE WHEN etype <> 'OBJECT' THEN 'not a JSON object'
            WHEN j IS NULL THEN 'malformed message'
            WHEN j.role IS NULL THEN 'missing field: role'
            ELSE 'role:' || j.role END,
       CASE WHEN etype <> 'OBJECT' OR j IS NULL OR j.role IS NULL THEN left(e::VARCHAR, 120) END
FROM cl_j;

CREATE OR REPLACE TEMP TABLE cl_msgs AS
SELECT c.fid, c.line, c.j,
       coalesce(nullif(regexp_extract(f.file, '([^/\\]+)[/\\][^/\\]+$', 1), ''), f.stem) AS session_id,
       parse_ts(c.j.ts) AS ts,
       CASE WHEN json_type(c.j.content) = 'ARRAY' THEN try(json_transform(c.j.content,
         '[{"type":"VARCHAR","text":"VARCHAR","id":"VARCHAR","name":"VARCHAR","input":"JSON","call_id":"VARCHAR",
            "tool_use_id":"VARCHAR","content":"JSON"}]')) END AS blocks,
       CASE WHEN json_type(c.j.content) = 'VARCHAR' THEN c.j.content ->> '$' END AS content_str
FROM cl_j c JOIN fmt_fates t USING (fid, line) JOIN batch_files f USING (fid)
WHERE t.fate = 'event';

CREATE OR REPLACE TEMP TABLE cl_parts AS
SELECT *,
       coalesce(list_filter(list_transform(blocks, lambda b: CASE
                  WHEN b.type = 'text' AND NOT starts_with(ltrim(coalesce(b.text, '')), '<environment_details>') THEN b.text
                  WHEN b.type = 'tool_result' THEN json_text(b.content) END), lambda t: t IS NOT NULL),
                CASE WHEN content_str IS NOT NULL THEN [content_str] ELSE [] END) AS texts,
       len(list_filter(blocks, lambda b: b.type = 'text' AND starts_with(ltrim(coalesce(b.text, '')), '<environment_details>'))) > 0 AS env_details,
       list_filter(blocks, lambda b: b.type = 'tool_use') AS uses,
       list_filter(blocks, lambda b: b.type = 'tool_result') AS results,
       len(list_filter(blocks, lambda b: b.type = 'image')) AS n_images
FROM cl_msgs;

CREATE OR REPLACE TEMP TABLE cl_rows AS
SELECT *,
       nullif(array_to_string(texts, chr(10)), '') AS text,
       coalesce(texts[1], '') AS first_text,
       lag(CASE WHEN j.role = 'assistant' THEN uses[1].id END) OVER (PARTITION BY fid ORDER BY line) AS prev_call_id
FROM cl_parts;

CREATE OR REPLACE TEMP TABLE fmt_events AS
SELECT fid, line, line AS last_line, 0 AS part, 1 AS n_records, session_id, ts, ts AS ts_end,
       CASE WHEN ts IS NULL THEN 'none' ELSE 'per_message' END AS ts_quality,
       j.role AS role,
       CASE WHEN j.role = 'assistant' THEN 'message'
            WHEN len(results) > 0 OR regexp_matches(first_text, '^\[[^\n]*\] Result:') THEN 'tool_result'
            ELSE 'message' END AS kind,
       text,
       CASE WHEN j.role = 'assistant' THEN coalesce(list_transform(uses,
              lambda b: {'id': coalesce(b.id, b.call_id), 'name': b.name, 'arguments': b.input::VARCHAR}), []) ELSE [] END
         ::STRUCT(id VARCHAR, name VARCHAR, arguments VARCHAR)[] AS tool_calls,
       CASE WHEN j.role = 'user' THEN coalesce(results[1].tool_use_id,
              CASE WHEN regexp_matches(first_text, '^\[[^\n]*\] Result:') THEN prev_call_id END) END AS tool_call_id,
       NULL::VARCHAR AS finish_reason, NULL::VARCHAR AS initiator, NULL::VARCHAR AS message_id,
       NULL::VARCHAR AS record_id, NULL::VARCHAR AS parent_id, NULL::VARCHAR AS turn_id,
       CASE WHEN j.role = 'assistant' THEN j.modelInfo.modelId END AS model,
       false AS is_sidechain,
       j.metrics.tokens.prompt AS tokens_in, j.metrics.tokens.completion AS tokens_out,
       CASE WHEN j.role = 'assistant' THEN json_object(
              'cline_file', 'api', 'mode', j.modelInfo.mode, 'providerId', j.modelInfo.providerId,
              'tokens_cached', j.metrics.tokens.cached, 'block_types', list_transform(blocks, lambda b: b.type))
            ELSE json_object(
              'cline_file', 'api',
              'result_of', CASE WHEN regexp_matches(first_text, '^\[[^\n]*\] Result:')
                                THEN regexp_extract(first_text, '^\[([A-Za-z0-9_:.-]+)', 1) END,
              'environment_details', env_details,
              'has_task', contains(coalesce(text, ''), '<task>'),
              'has_feedback', contains(coalesce(text, ''), '<feedback>'),
              'has_answer', contains(coalesce(text, ''), '<answer>'),
              'has_user_message', contains(coalesce(text, ''), '<user_message>'),
              'no_tool_error', contains(coalesce(text, ''), '[ERROR] You did not use a tool in your previous response'),
              'task_resumption', starts_with(first_text, '[TASK RESUMPTION]'),
              'has_task_resumption_block', contains(coalesce(text, ''), '[TASK RESUMPTION]'),
              'human_text', nullif(array_to_string(regexp_extract_all(coalesce(text, ''),
                    '(?s)<(?:task|feedback|answer|user_message)>\n?(.*?)\n?</(?:task|feedback|answer|user_message)>', 1), chr(10)), ''),
              'n_images', n_images,
              'content_is_string', content_str IS NOT NULL) END AS meta
FROM cl_rows;

-- the whole file is re-read on every change: nothing to carry
CREATE OR REPLACE TEMP TABLE fmt_ctx AS
SELECT fid, NULL::VARCHAR AS ctx_session, NULL::VARCHAR AS ctx_model, NULL::VARCHAR AS ctx_turn FROM batch_files;
