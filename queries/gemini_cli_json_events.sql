-- Gemini CLI single-JSON chat file (older layout, ~/.gemini/tmp/<projectHash>/chats/session-*.json) ->
-- fmt_events + fmt_fates.   Input: stage_lines, batch_files. One object {sessionId, projectHash, startTime,
-- lastUpdated, messages: [...]} staged whole as line 1; each element of `messages` is a record numbered
-- 1.. (line = its 1-based position). Messages map exactly as in the JSONL layout (gemini_cli_events.sql):
-- user -> user message, gemini -> assistant message (toolCall results in meta.tool_results), info/other ->
-- system. A repeated id (not seen in real files) is merged, last wins.
CREATE OR REPLACE TEMP TABLE gm_doc AS
SELECT s.fid, s.txt, s.bad_excerpt, s.blank,
       s.txt IS NOT NULL AND NOT s.blank AND json_valid(s.txt) AS ok,
       CASE WHEN s.txt IS NOT NULL AND NOT s.blank AND json_valid(s.txt) THEN json_type(s.txt) END AS shape
FROM stage_lines s;

CREATE OR REPLACE TEMP TABLE gm_el AS
SELECT fid, x.i::INTEGER AS line, x.e AS e, json_type(x.e) AS etype,
       CASE WHEN json_type(x.e) = 'OBJECT' THEN try(json_transform(x.e, '{
         "id":"VARCHAR","timestamp":"JSON","type":"VARCHAR","content":"JSON","displayContent":"JSON",
         "thoughts":"JSON","model":"VARCHAR","toolCalls":"JSON",
         "tokens":{"input":"BIGINT","output":"BIGINT","cached":"BIGINT","thoughts":"BIGINT","tool":"BIGINT","total":"BIGINT"}}')) END AS j
FROM (SELECT fid, unnest(list_transform(json_extract(txt, '$.messages[*]'), lambda e, i: {'i': i, 'e': e})) AS x
      FROM gm_doc WHERE shape = 'OBJECT' AND json_type(txt, '$.messages') = 'ARRAY');

CREATE OR REPLACE TEMP TABLE fmt_fates AS
SELECT fid, 1 AS line, 'reject' AS fate,
       CASE WHEN bad_excerpt IS NOT NULL THEN 'invalid UTF-8'
            WHEN NOT ok THEN 'invalid JSON (truncated or malformed document)'
            WHEN shape <> 'OBJECT' THEN 'not a JSON object'
            ELSE 'missing or malformed field: messages' END AS label,
       coalesce(bad_excerpt, left(txt, 120)) AS excerpt
FROM gm_doc
WHERE NOT blank AND (bad_excerpt IS NOT NULL OR NOT ok OR shape <> 'OBJECT'
                     OR json_type(txt, '$.messages') IS DISTINCT FROM 'ARRAY')
UNION ALL
SELECT fid, line,
       CASE WHEN etype <> 'OBJECT' OR j IS NULL OR j.type IS NULL OR j.id IS NULL THEN 'reject' ELSE 'event' END,
       CASE WHEN etype <> 'OBJECT' THEN 'not a JSON object'
            WHEN j IS NULL THEN 'malformed message'
            WHEN j.type IS NULL THEN 'missing field: type'
            WHEN j.id IS NULL THEN 'missing field: id'
            ELSE 'type:' || j.type END,
       CASE WHEN etype <> 'OBJECT' OR j IS NULL OR j.type IS NULL OR j.id IS NULL THEN left(e::VARCHAR, 120) END
FROM gm_el;

CREATE OR REPLACE TEMP TABLE gm_rec AS
SELECT r.fid, min(r.line) AS line, max(r.line) AS last_line, count(*)::INTEGER AS n_records, arg_max(r.j, r.line) AS j
FROM gm_el r JOIN fmt_fates t USING (fid, line)
WHERE t.fate = 'event'
GROUP BY r.fid, r.j.id;

CREATE OR REPLACE TEMP TABLE gm_ctx AS
SELECT f.fid, coalesce(d.txt ->> '$.sessionId', f.stem) AS session_id, d.txt ->> '$.kind' AS session_kind
FROM batch_files f LEFT JOIN gm_doc d ON d.fid = f.fid AND d.shape = 'OBJECT';

-- ---- from here on the same text as gemini_cli_events.sql (input: gm_rec, gm_ctx) ----
CREATE OR REPLACE TEMP TABLE gm_calls AS
SELECT fid, line, x.i::INTEGER AS part, x.c AS c
FROM (SELECT fid, line, unnest(list_transform(try(json_transform(j.toolCalls,
        '[{"id":"VARCHAR","name":"VARCHAR","args":"JSON","result":"JSON","status":"VARCHAR","timestamp":"JSON",
           "resultDisplay":"JSON","displayName":"VARCHAR"}]')), lambda c, i: {'i': i, 'c': c})) AS x
      FROM gm_rec WHERE json_type(j.toolCalls) = 'ARRAY');

CREATE OR REPLACE TEMP TABLE fmt_events AS
SELECT r.fid, r.line, r.last_line, 0 AS part, r.n_records, x.session_id,
       parse_ts(r.j.timestamp) AS ts, parse_ts(r.j.timestamp) AS ts_end,
       CASE WHEN parse_ts(r.j.timestamp) IS NULL THEN 'none' ELSE 'per_message' END AS ts_quality,
       CASE r.j.type WHEN 'user' THEN 'user' WHEN 'gemini' THEN 'assistant' ELSE 'system' END AS role,
       CASE WHEN r.j.type IN ('user', 'gemini') THEN 'message' ELSE 'system' END AS kind,
       nullif(json_text(r.j.content), '') AS text,
       coalesce((SELECT list({'id': g.c.id, 'name': g.c.name, 'arguments': g.c.args::VARCHAR} ORDER BY g.part)
                 FROM gm_calls g WHERE g.fid = r.fid AND g.line = r.line), [])
         ::STRUCT(id VARCHAR, name VARCHAR, arguments VARCHAR)[] AS tool_calls,
       NULL::VARCHAR AS tool_call_id, NULL::VARCHAR AS finish_reason, NULL::VARCHAR AS initiator,
       r.j.id AS message_id, r.j.id AS record_id, NULL::VARCHAR AS parent_id, NULL::VARCHAR AS turn_id,
       CASE WHEN r.j.type = 'gemini' THEN r.j.model END AS model, coalesce(x.session_kind = 'subagent', false) AS is_sidechain,
       r.j.tokens.input AS tokens_in, r.j.tokens.output AS tokens_out,
       json_object('gemini_type', r.j.type, 'rewrites', r.n_records,
                   'display_text', CASE WHEN r.j.displayContent IS NOT NULL THEN nullif(json_text(r.j.displayContent), '') END,
                   'display_has_function_response', contains(coalesce(r.j.displayContent::VARCHAR, ''), '"functionResponse"'),
                   'content_is_string', json_type(r.j.content) = 'VARCHAR',
                   'n_thoughts', CASE WHEN json_type(r.j.thoughts) = 'ARRAY' THEN json_array_length(r.j.thoughts) END,
                   'tokens_cached', r.j.tokens.cached, 'tokens_thoughts', r.j.tokens.thoughts,
                   'session_kind', x.session_kind,
                   -- results of the calls, recorded inside this same record (kept here: an event per result
                   -- would share this record's line, and a line is counted once)
                   'tool_results', (SELECT list({'id': g.c.id, 'name': g.c.name, 'status': g.c.status,
                                                 'ts': g.c.timestamp ->> '$',
                                                 'is_error': g.c.status = 'error' OR (g.c.result -> '$[0].functionResponse.response.error') IS NOT NULL}
                                                ORDER BY g.part)
                                    FROM gm_calls g WHERE g.fid = r.fid AND g.line = r.line)) AS meta
FROM gm_rec r JOIN gm_ctx x USING (fid);

CREATE OR REPLACE TEMP TABLE fmt_ctx AS
SELECT fid, session_id AS ctx_session, NULL::VARCHAR AS ctx_model, NULL::VARCHAR AS ctx_turn FROM gm_ctx;
