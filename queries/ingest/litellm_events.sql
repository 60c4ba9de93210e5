-- LiteLLM request logs (issue 22): one StandardLoggingPayload a line (the `standard_logging_object` its
-- callbacks receive, as a custom callback or a logging integration writes it; the object may also sit under
-- a top-level "standard_logging_object") -> fmt_events + fmt_fates + fmt_ctx. Input: stage_lines,
-- batch_files, the variable otlp_conversation_attr (ingest --conversation-attr). Fields read (BerriAI/litellm
-- litellm/types/utils.py StandardLoggingPayload; docs/my-website/docs/proxy/logging_spec.md):
--   id, trace_id, call_type, status (success / failure), startTime / endTime (epoch seconds), model,
--   messages (the OpenAI chat request history), response ({id, model, choices: [{finish_reason, message:
--   {role, content, tool_calls}}]}), prompt_tokens / completion_tokens, error_str,
--   metadata.requester_custom_headers (the x- headers the client sent the proxy: x-initiator),
--   metadata / metadata.requester_metadata / metadata.spend_logs_metadata (a user-named conversation key).
-- One record = one model request, read like an OTLP span (otlp_spans.sql): only the messages after the last
-- assistant message of `messages` are new (user / tool / system events at startTime); the response is one
-- assistant event at endTime (finish = choices[0].finish_reason; a failure: 'error', text error_str).
-- session_id = the metadata key named by --conversation-attr, else trace_id (LiteLLM's litellm_trace_id /
-- litellm_session_id set it), else the payload id; meta.conversation_by says which. Non-chat call types
-- (embedding, image_generation, ...) are skipped as call_type:<type>. The initiator header goes on the
-- request's last new user / tool message. One line per payload; its events are parts 1.. (file_stats.sql
-- counts a line with parts > 0 once).

CREATE OR REPLACE TEMP TABLE ll AS
SELECT s.fid, s.line, s.txt IS NULL AS bad_utf8, s.blank, s.bad_excerpt,
       CASE WHEN s.txt IS NOT NULL AND NOT s.blank THEN left(s.txt, 120) END AS excerpt, j IS NOT NULL AS parsed,
       coalesce(json_extract(j.standard_logging_object, '$'), CASE WHEN j IS NOT NULL THEN s.txt::JSON END) AS p
FROM (SELECT o.*, CASE WHEN o.txt IS NOT NULL AND NOT o.blank
                       THEN parse_line(o.txt, '{"standard_logging_object":"JSON","messages":"JSON"}') END AS j
      FROM stage_lines o) s;

CREATE OR REPLACE TEMP TABLE ll_rec AS
SELECT l.*, p ->> 'call_type' AS call_type, p ->> 'status' AS status, p ->> 'trace_id' AS trace_id, p ->> 'id' AS rid,
       parse_ts(json_extract(p, '$.startTime')) AS t0, parse_ts(json_extract(p, '$.endTime')) AS t1,
       json_extract(p, '$.messages') AS msgs, json_extract(p, '$.response') AS resp,
       lower(coalesce(p ->> '$.metadata.requester_custom_headers."x-initiator"',
                      p ->> '$.metadata.requester_custom_headers."X-Initiator"')) AS initiator,
       CASE WHEN getvariable('otlp_conversation_attr') IS NOT NULL THEN coalesce(
           json_extract_string(p, ['metadata', coalesce(getvariable('otlp_conversation_attr'), '')])[1],
           json_extract_string(p, ['metadata', 'requester_metadata', coalesce(getvariable('otlp_conversation_attr'), '')])[1],
           json_extract_string(p, ['metadata', 'spend_logs_metadata', coalesce(getvariable('otlp_conversation_attr'), '')])[1]) END AS conv_named
FROM ll l;

CREATE OR REPLACE TEMP TABLE fmt_fates AS
SELECT fid, line,
       CASE WHEN blank THEN 'skip'
            WHEN bad_utf8 OR NOT parsed OR json_type(p) <> 'OBJECT' OR (msgs IS NULL AND resp IS NULL) THEN 'reject'
            WHEN call_type IS NOT NULL AND call_type NOT IN ('completion', 'acompletion', 'text_completion', 'atext_completion')
                 THEN 'skip'
            WHEN t0 IS NULL OR t1 IS NULL THEN 'reject'
            ELSE 'event' END AS fate,
       CASE WHEN blank THEN 'blank_line' WHEN bad_utf8 THEN 'invalid UTF-8' WHEN NOT parsed THEN 'invalid JSON'
            WHEN json_type(p) <> 'OBJECT' THEN 'not a JSON object'
            WHEN msgs IS NULL AND resp IS NULL THEN 'missing field: messages / response'
            WHEN call_type IS NOT NULL AND call_type NOT IN ('completion', 'acompletion', 'text_completion', 'atext_completion')
                 THEN 'call_type:' || call_type
            WHEN t0 IS NULL OR t1 IS NULL THEN 'missing or bad startTime / endTime'
            ELSE 'payload' END AS label,
       coalesce(bad_excerpt, excerpt) AS excerpt
FROM ll_rec;

CREATE OR REPLACE TEMP TABLE ll_ev AS
WITH r AS (
    SELECT r.*, CASE WHEN json_type(msgs) = 'ARRAY' THEN json_extract(msgs, '$[*]') ELSE [] END AS ml
    FROM ll_rec r JOIN fmt_fates f USING (fid, line) WHERE f.fate = 'event'
), m AS (
    SELECT fid, line, x.i AS idx, x.m
    FROM (SELECT fid, line, unnest(list_transform(ml, lambda m, i: {'i': i, 'm': m})) AS x,
                 list_max(list_transform(ml, lambda m, i: CASE WHEN m ->> 'role' = 'assistant' THEN i END)) AS last_asst
          FROM r)
    WHERE x.i > coalesce(last_asst, 0) AND x.m ->> 'role' IN ('user', 'tool', 'system', 'developer', 'function')
), inp AS (
    SELECT fid, line, 0 AS grp, idx, m ->> 'role' AS role, json_text(json_extract(m, '$.content')) AS text,
           []::STRUCT(id VARCHAR, name VARCHAR, arguments VARCHAR)[] AS tool_calls, m ->> 'tool_call_id' AS tool_call_id,
           NULL::VARCHAR AS finish_reason
    FROM m
), outp AS (
    SELECT fid, line, 1 AS grp, 0 AS idx, 'assistant' AS role,
           coalesce(json_text(json_extract(resp, '$.choices[0].message.content')),
                    CASE WHEN status = 'failure' THEN json_extract_string(p, '$.error_str') END) AS text,
           openai_tool_calls(json_extract(resp, '$.choices[0].message.tool_calls')) AS tool_calls, NULL AS tool_call_id,
           coalesce(resp ->> '$.choices[0].finish_reason', CASE WHEN status = 'failure' THEN 'error' END) AS finish_reason
    FROM r
)
SELECT x.*, row_number() OVER (PARTITION BY fid, line ORDER BY grp, idx)::INTEGER AS part,
       grp = 0 AND idx = max(CASE WHEN grp = 0 AND role IN ('user', 'tool', 'function') THEN idx END) OVER (PARTITION BY fid, line) AS is_last_new
FROM (SELECT * FROM inp UNION ALL SELECT * FROM outp) x;

CREATE OR REPLACE TEMP TABLE fmt_events AS
SELECT e.fid, e.line, e.line AS last_line, e.part,
       1 AS n_records,
       coalesce(r.conv_named, r.trace_id, r.rid, f.stem || ':' || e.line) AS session_id,
       CASE WHEN e.grp = 0 THEN r.t0 ELSE r.t1 END AS ts, CASE WHEN e.grp = 0 THEN r.t0 ELSE r.t1 END AS ts_end,
       'per_message' AS ts_quality,
       CASE e.role WHEN 'developer' THEN 'system' WHEN 'function' THEN 'tool' ELSE e.role END AS role,
       CASE WHEN e.role IN ('tool', 'function') THEN 'tool_result' ELSE 'message' END AS kind,
       e.text, e.tool_calls::STRUCT(id VARCHAR, name VARCHAR, arguments VARCHAR)[] AS tool_calls, e.tool_call_id,
       e.finish_reason, CASE WHEN e.is_last_new THEN r.initiator END AS initiator,
       CASE WHEN e.grp = 1 THEN coalesce(r.resp ->> 'id', r.rid) END AS message_id,
       r.rid AS record_id, NULL::VARCHAR AS parent_id, NULL::VARCHAR AS turn_id,
       CASE WHEN e.grp = 1 THEN coalesce(r.resp ->> 'model', r.p ->> 'model') END AS model, false AS is_sidechain,
       CASE WHEN e.grp = 1 THEN try_cast(r.p ->> 'prompt_tokens' AS BIGINT) END AS tokens_in,
       CASE WHEN e.grp = 1 THEN try_cast(r.p ->> 'completion_tokens' AS BIGINT) END AS tokens_out,
       json_object('conversation_by', CASE WHEN r.conv_named IS NOT NULL THEN 'attr:' || getvariable('otlp_conversation_attr')
                                           WHEN r.trace_id IS NOT NULL THEN 'trace' ELSE 'payload' END,
                   'trace_id', r.trace_id, 'call_type', r.call_type, 'status', r.status, 'request_start', r.t0,
                   'input_index', CASE WHEN e.grp = 0 THEN e.idx END) AS meta
FROM ll_ev e JOIN ll_rec r USING (fid, line) JOIN batch_files f USING (fid);

CREATE OR REPLACE TEMP TABLE fmt_ctx AS
SELECT fid, ctx_session, ctx_model, ctx_turn FROM batch_files;
