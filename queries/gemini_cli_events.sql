-- Gemini CLI chat JSONL (~/.gemini/tmp/<projectHash>/chats/*.jsonl) -> fmt_events + fmt_fates.
-- Input: stage_lines, batch_files. Line 1 is a header {sessionId, projectHash, startTime, lastUpdated,
-- kind}; `{"$set": {...}}` lines patch it; message records {id, timestamp, type: user|gemini|info, content,
-- thoughts, tokens, model, toolCalls} are RE-WRITTEN with the same id (first without, then with
-- toolCalls): all lines of one id are one event (line = first, last_line = last, n_records = k), the
-- last write wins. A gemini message is an assistant event (tool_calls from toolCalls; the calls' results,
-- status and own timestamps, recorded in the same record, are listed in meta.tool_results). `info` (and
-- any other type) records are system events. The file is re-read whole when it changes (appendable = false).
CREATE OR REPLACE TEMP TABLE gm_raw AS
SELECT s.fid, s.line, s.txt, s.blank, s.bad_excerpt,
       CASE WHEN s.txt IS NOT NULL AND NOT s.blank THEN try(json_transform(s.txt, '{
         "id":"VARCHAR","timestamp":"JSON","type":"VARCHAR","content":"JSON","displayContent":"JSON",
         "thoughts":"JSON","model":"VARCHAR","toolCalls":"JSON",
         "tokens":{"input":"BIGINT","output":"BIGINT","cached":"BIGINT","thoughts":"BIGINT","tool":"BIGINT","total":"BIGINT"},
         "sessionId":"VARCHAR","projectHash":"VARCHAR","startTime":"VARCHAR","kind":"VARCHAR","$set":"JSON"}')) END AS j
FROM stage_lines s;

CREATE OR REPLACE TEMP TABLE fmt_fates AS
SELECT fid, line,
       CASE WHEN txt IS NULL OR (NOT blank AND j IS NULL) THEN 'reject'
            WHEN blank THEN 'skip'
            WHEN json_type(txt) <> 'OBJECT' THEN 'reject'
            WHEN j.id IS NOT NULL AND j.type IS NOT NULL THEN 'event'
            WHEN j.sessionId IS NOT NULL OR j."$set" IS NOT NULL THEN 'skip'
            ELSE 'reject' END AS fate,
       CASE WHEN txt IS NULL THEN 'invalid UTF-8'
            WHEN blank THEN 'blank_line'
            WHEN j IS NULL THEN 'invalid JSON'
            WHEN json_type(txt) <> 'OBJECT' THEN 'not a JSON object'
            WHEN j.id IS NOT NULL AND j.type IS NOT NULL THEN 'type:' || j.type
            WHEN j.sessionId IS NOT NULL THEN 'session_header'
            WHEN j."$set" IS NOT NULL THEN '$set'
            WHEN j.id IS NULL THEN 'missing field: id'
            ELSE 'missing field: type' END AS label,
       CASE WHEN txt IS NULL THEN bad_excerpt ELSE left(txt, 120) END AS excerpt
FROM gm_raw;

-- message records, one row per id (last write wins), with the lines it spans
CREATE OR REPLACE TEMP TABLE gm_rec AS
SELECT r.fid, min(r.line) AS line, max(r.line) AS last_line, count(*)::INTEGER AS n_records,
       arg_max(r.j, r.line) AS j
FROM gm_raw r JOIN fmt_fates t USING (fid, line)
WHERE t.fate = 'event'
GROUP BY r.fid, r.j.id;

CREATE OR REPLACE TEMP TABLE gm_ctx AS
SELECT f.fid, coalesce(h.sid, f.ctx_session, f.stem) AS session_id, h.kind AS session_kind
FROM batch_files f
LEFT JOIN (SELECT fid, arg_min(j.sessionId, line) AS sid, arg_min(j.kind, line) AS kind
           FROM gm_raw WHERE j.sessionId IS NOT NULL GROUP BY fid) h USING (fid);

-- ---- from here on the same text as gemini_cli_json_events.sql (input: gm_rec, gm_ctx) ----
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
