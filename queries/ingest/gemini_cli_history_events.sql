-- Gemini CLI saved histories beside the chats in ~/.gemini/tmp/<projectHash>/ -> fmt_events + fmt_fates.
-- Input: stage_lines, stage_doc, batch_files. Writer: google-gemini/gemini-cli packages/core/src/core/logger.ts.
--   checkpoint-<tag>.json  (`/chat save <tag>`, also the automatic checkpoints before a file edit): the exact
--        model history, {history: [Content], authType} or, older, the bare [Content] list. Content = {role:
--        user | model, parts: [{text} | {text, thought: true} | {functionCall {id, name, args}} |
--        {functionResponse {id, name, response}} | {inlineData} | {fileData} ...]}
--   logs.json  [{sessionId, messageId, timestamp, type: "user", message}]: the prompts a person typed, kept
--        for the up-arrow history; the same prompts are in the chat files -> every entry skipped prompt_log
-- The document is staged whole as line 1; each Content is a record numbered 1.. (line = its position).
-- Mapping (no timestamps in a checkpoint: ts_quality none; session_id = the file stem): a model Content ->
-- one assistant event (part 1; text = its non-thought text parts, tool_calls = its functionCall parts); a
-- user Content -> one tool_result event per functionResponse part (part 1..n, tool_call_id = its id, role
-- tool), then, when it holds text, one user message (part n+1). Another role is a shape this reader does
-- not know -> skip unknown_shape:role <r>.
CREATE OR REPLACE TEMP TABLE gh_el AS
SELECT * FROM doc_elements('$')
UNION ALL
SELECT * FROM doc_elements('$.history');

CREATE OR REPLACE TEMP TABLE gh_j AS
SELECT fid, line, e, etype,
       CASE WHEN etype = 'OBJECT' THEN try(json_transform(e, '{"role":"VARCHAR",
         "parts":[{"text":"VARCHAR","thought":"BOOLEAN","functionCall":{"id":"VARCHAR","name":"VARCHAR","args":"JSON"},
                   "functionResponse":{"id":"VARCHAR","name":"VARCHAR","response":"JSON"},"inlineData":"JSON","fileData":"JSON"}],
         "sessionId":"VARCHAR","messageId":"JSON","type":"VARCHAR","message":"VARCHAR"}')) END AS j
FROM gh_el;

CREATE OR REPLACE TEMP TABLE fmt_fates AS
SELECT fid, 1 AS line, 'reject' AS fate,
       coalesce(problem, 'not a Gemini CLI history (no Content list)') AS label, excerpt
FROM stage_doc
WHERE NOT blank AND (problem IS NOT NULL OR NOT (shape = 'ARRAY' OR json_type(txt, '$.history') = 'ARRAY'))
UNION ALL
SELECT fid, line,
       CASE WHEN etype <> 'OBJECT' OR j IS NULL THEN 'reject'
            WHEN j.role IN ('user', 'model') AND j.parts IS NOT NULL THEN 'event'
            WHEN j.role IS NULL AND j.message IS NOT NULL AND j.sessionId IS NOT NULL THEN 'skip'
            WHEN j.role IS NOT NULL AND j.role NOT IN ('user', 'model') THEN 'skip'
            ELSE 'reject' END,
       CASE WHEN etype <> 'OBJECT' THEN 'not a JSON object'
            WHEN j IS NULL THEN 'malformed Content'
            WHEN j.role IN ('user', 'model') AND j.parts IS NOT NULL THEN 'role:' || j.role
            WHEN j.role IS NULL AND j.message IS NOT NULL AND j.sessionId IS NOT NULL THEN 'prompt_log'
            WHEN j.role IS NOT NULL AND j.role NOT IN ('user', 'model') THEN 'unknown_shape:role ' || j.role
            WHEN j.role IS NULL THEN 'missing field: role'
            ELSE 'missing field: parts' END,
       left(e::VARCHAR, 120)
FROM gh_j;

CREATE OR REPLACE TEMP TABLE gh_msg AS
SELECT g.fid, g.line, g.j.role AS role, f.stem AS session_id,
       list_filter(g.j.parts, lambda p: p.text IS NOT NULL AND p.text <> '' AND NOT coalesce(p.thought, false)) AS texts,
       list_filter(g.j.parts, lambda p: p.functionCall IS NOT NULL) AS calls,
       list_filter(g.j.parts, lambda p: p.functionResponse IS NOT NULL) AS responses,
       len(list_filter(g.j.parts, lambda p: coalesce(p.thought, false))) AS n_thoughts,
       list_transform(g.j.parts, lambda p: CASE WHEN p.functionCall IS NOT NULL THEN 'functionCall'
                                                WHEN p.functionResponse IS NOT NULL THEN 'functionResponse'
                                                WHEN coalesce(p.thought, false) THEN 'thought'
                                                WHEN p.text IS NOT NULL THEN 'text'
                                                WHEN p.inlineData IS NOT NULL THEN 'inlineData'
                                                WHEN p.fileData IS NOT NULL THEN 'fileData' ELSE 'other' END) AS part_types
FROM gh_j g JOIN fmt_fates t USING (fid, line) JOIN batch_files f USING (fid)
WHERE t.fate = 'event';

CREATE OR REPLACE TEMP TABLE fmt_events AS
-- model turns
SELECT fid, line, line AS last_line, 1 AS part, 1 AS n_records, session_id,
       NULL::TIMESTAMPTZ AS ts, NULL::TIMESTAMPTZ AS ts_end, 'none' AS ts_quality, 'assistant' AS role, 'message' AS kind,
       nullif(array_to_string(list_transform(texts, lambda p: p.text), chr(10)), '') AS text,
       list_transform(calls, lambda p: {'id': p.functionCall.id, 'name': p.functionCall.name,
                                        'arguments': p.functionCall.args::VARCHAR})::STRUCT(id VARCHAR, name VARCHAR, arguments VARCHAR)[] AS tool_calls,
       NULL::VARCHAR AS tool_call_id, NULL::VARCHAR AS finish_reason, NULL::VARCHAR AS initiator,
       NULL::VARCHAR AS message_id, NULL::VARCHAR AS record_id, NULL::VARCHAR AS parent_id, NULL::VARCHAR AS turn_id,
       NULL::VARCHAR AS model, false AS is_sidechain, NULL::BIGINT AS tokens_in, NULL::BIGINT AS tokens_out,
       json_object('gemini_role', 'model', 'n_thoughts', n_thoughts, 'part_types', part_types, 'shape', 'checkpoint') AS meta
FROM gh_msg WHERE role = 'model'
UNION ALL
-- function responses sent back as a user Content: one tool result each
SELECT fid, line, line, k::INTEGER, 1, session_id, NULL, NULL, 'none', 'tool', 'tool_result',
       coalesce(p.functionResponse.response ->> '$.output', p.functionResponse.response ->> '$.error',
                p.functionResponse.response::VARCHAR),
       []::STRUCT(id VARCHAR, name VARCHAR, arguments VARCHAR)[], p.functionResponse.id, NULL, NULL, NULL, NULL, NULL,
       NULL, NULL, false, NULL, NULL,
       json_object('gemini_tool', p.functionResponse.name,
                   'is_error', (p.functionResponse.response -> '$.error') IS NOT NULL, 'shape', 'checkpoint')
FROM (SELECT *, unnest(responses) AS p, generate_subscripts(responses, 1) AS k FROM gh_msg WHERE role = 'user')
UNION ALL
-- what a person (or the CLI on their behalf) wrote
SELECT fid, line, line, len(responses) + 1, 1, session_id, NULL, NULL, 'none', 'user', 'message',
       array_to_string(list_transform(texts, lambda p: p.text), chr(10)),
       []::STRUCT(id VARCHAR, name VARCHAR, arguments VARCHAR)[], NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       false, NULL, NULL,
       json_object('gemini_role', 'user', 'part_types', part_types, 'shape', 'checkpoint')
FROM gh_msg WHERE role = 'user' AND (len(texts) > 0 OR len(responses) = 0);

CREATE OR REPLACE TEMP TABLE fmt_ctx AS
SELECT fid, NULL::VARCHAR AS ctx_session, NULL::VARCHAR AS ctx_model, NULL::VARCHAR AS ctx_turn FROM batch_files;
