-- Gemini CLI messages -> fmt_events + fmt_ctx, shared by both layouts (gemini_cli_events.sql for the
-- JSONL log, gemini_cli_json_events.sql for the single-JSON session file), run right after either.
-- Input: gm_rec (one merged record per message id: fid, line, last_line, part (0, or the position inside a
-- JSONL checkpoint line), n_records, j), gm_ctx (fid, session_id, session_kind).
CREATE OR REPLACE TEMP TABLE gm_calls AS
SELECT fid, line, part AS mpart, x.i::INTEGER AS part, x.c AS c
FROM (SELECT fid, line, part, unnest(list_transform(try(json_transform(j.toolCalls,
        '[{"id":"VARCHAR","name":"VARCHAR","args":"JSON","result":"JSON","status":"VARCHAR","timestamp":"JSON",
           "resultDisplay":"JSON","displayName":"VARCHAR"}]')), lambda c, i: {'i': i, 'c': c})) AS x
      FROM gm_rec WHERE json_type(j.toolCalls) = 'ARRAY');

CREATE OR REPLACE TEMP TABLE fmt_events AS
SELECT r.fid, r.line, r.last_line, r.part, r.n_records, x.session_id,
       parse_ts(r.j.timestamp) AS ts, parse_ts(r.j.timestamp) AS ts_end,
       CASE WHEN parse_ts(r.j.timestamp) IS NULL THEN 'none' ELSE 'per_message' END AS ts_quality,
       CASE r.j.type WHEN 'user' THEN 'user' WHEN 'gemini' THEN 'assistant' ELSE 'system' END AS role,
       CASE WHEN r.j.type IN ('user', 'gemini') THEN 'message' ELSE 'system' END AS kind,
       nullif(json_text(r.j.content), '') AS text,
       coalesce((SELECT list({'id': g.c.id, 'name': g.c.name, 'arguments': g.c.args::VARCHAR} ORDER BY g.part)
                 FROM gm_calls g WHERE g.fid = r.fid AND g.line = r.line AND g.mpart = r.part), [])
         ::STRUCT(id VARCHAR, name VARCHAR, arguments VARCHAR)[] AS tool_calls,
       NULL::VARCHAR AS tool_call_id, NULL::VARCHAR AS finish_reason, NULL::VARCHAR AS initiator,
       r.j.id AS message_id, r.j.id AS record_id, NULL::VARCHAR AS parent_id, NULL::VARCHAR AS turn_id,
       CASE WHEN r.j.type = 'gemini' THEN r.j.model END AS model, coalesce(x.session_kind = 'subagent', false) AS is_sidechain,
       r.j.tokens.input AS tokens_in, r.j.tokens.output AS tokens_out,
       json_object('gemini_type', r.j.type, 'rewrites', r.n_records, 'from_checkpoint', r.part > 0,
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
                                    FROM gm_calls g WHERE g.fid = r.fid AND g.line = r.line AND g.mpart = r.part)) AS meta
FROM gm_rec r JOIN gm_ctx x USING (fid);

CREATE OR REPLACE TEMP TABLE fmt_ctx AS
SELECT fid, session_id AS ctx_session, NULL::VARCHAR AS ctx_model, NULL::VARCHAR AS ctx_turn FROM gm_ctx;
