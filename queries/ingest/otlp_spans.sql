-- OTLP traces (issue 22): GenAI and OpenInference LLM spans -> fmt_events + fmt_fates + fmt_ctx.
-- Input: ot_raw and ot_flat (otlp_exports.sql, or phoenix_spans_events.sql: a record, its spans), batch_files,
-- the variable otlp_conversation_attr (ingest --conversation-attr; may be unset).
-- A record (line) is {"resourceSpans": [{resource, scopeSpans: [{scope, spans: [...]}]}]}; a collector or a
-- batch span processor puts many spans on one line. Every span is an event source, a skip (not an LLM
-- call: `span:<operation>`) or a reject, and every line is accounted once (tests/hostile.py): a line with
-- an LLM span that made events is an event line, and its first event's meta.spans tallies all its spans
-- (llm / skipped / rejected, with the kinds and reasons); a line with no such span is a skip labelled by
-- its spans' kinds (`span:execute_tool`, `span:chain+execute_tool`), or, when an LLM span on it is
-- unusable, a reject with that span's reason; a line that is no export at all is a reject.
--
-- An LLM span (gen_ai.operation.name chat / text_completion / generate_content, or openinference.span.kind
-- LLM, or gen_ai.*.message / gen_ai.choice span events) is one model request. Its messages come from:
--   GenAI attributes   gen_ai.input.messages / gen_ai.output.messages (and gen_ai.system_instructions, a
--                      list of parts: a system message before the input): JSON strings of {role, parts:
--                      [{type: text, content} | {type: tool_call, id, name, arguments} |
--                      {type: tool_call_response, id, response}], finish_reason}
--   GenAI span events  gen_ai.{system,user,assistant,tool}.message (input) and gen_ai.choice (output), the
--                      body in the attribute gen_ai.event.content (JSON) or in attributes content /
--                      tool_calls / id / finish_reason / message (OpenAI chat shapes)
--   OpenInference      llm.{input,output}_messages.<i>.message.{role, content, tool_call_id,
--                      contents.<j>.message_content.text, tool_calls.<k>.tool_call.{id, function.name,
--                      function.arguments}}; finish from llm.finish_reason or output.value's choices[0]
-- The input messages are the conversation so far: only those after the last assistant message of the
-- input (the first request: all of them) are new, and become events at the span start (role user /
-- tool / system; tool -> kind tool_result). The output is one assistant event at the span end (ts =
-- ts_end = end), finish_reason = the output message's, else gen_ai.response.finish_reasons[1] (else
-- llm.finish_reason), 'error' for a span with status ERROR and no output; tool calls from its tool_call
-- parts. session_id = gen_ai.conversation.id, else the span (then resource) attribute named by
-- otlp_conversation_attr, else the trace id; meta.conversation_by says which. The gateway's initiator
-- (x-initiator, http.request.header.x-initiator: string or string array) goes on the request's last new
-- message. model = gen_ai.response.model / gen_ai.request.model / llm.model_name; message_id =
-- gen_ai.response.id (OpenInference: output.value's id); record_id = spanId, parent_id = parentSpanId.
-- Parts are numbered 1.. per line over its spans' events (file_stats.sql counts a line with parts > 0 once).

CREATE OR REPLACE TEMP MACRO ot_val(v) AS
    coalesce(v ->> 'stringValue', v ->> 'intValue', v ->> 'doubleValue', v ->> 'boolValue');
CREATE OR REPLACE TEMP MACRO ot_get(attrs, k) AS list_filter(attrs, lambda a: a.key = k)[1].value;
CREATE OR REPLACE TEMP MACRO ot_str(attrs, k) AS ot_val(ot_get(attrs, k));
-- a string or a string array value, as a list
CREATE OR REPLACE TEMP MACRO ot_strs(v) AS CASE
    WHEN json_type(json_extract(v, '$.arrayValue')) = 'OBJECT' THEN list_transform(json_extract(v, '$.arrayValue.values[*]'), lambda x: ot_val(x))
    WHEN ot_val(v) IS NOT NULL THEN [ot_val(v)] END;
CREATE OR REPLACE TEMP MACRO ot_ts(ns) AS
    ts_in_range(try(make_timestamp((try_cast(ns AS HUGEINT) // 1000)::BIGINT)::TIMESTAMPTZ));

-- one row per span: its place in the line, its attributes and what they say
CREATE OR REPLACE TEMP TABLE ot_spans AS
WITH a AS (
    -- (the span without its attributes, which are kept once, as attrs)
    SELECT f.fid, f.line, f.span_no, f.scope,
           {'traceId': f.sp.traceId, 'spanId': f.sp.spanId, 'parentSpanId': f.sp.parentSpanId, 'name': f.sp.name,
            'events': f.sp.events, 'status': f.sp.status} AS sp,
           coalesce(f.sp.attributes, []) AS attrs, coalesce(f.res, []) AS rattrs,
           ot_str(f.sp.attributes, 'gen_ai.operation.name') AS op,
           ot_str(f.sp.attributes, 'openinference.span.kind') AS oi_kind,
           len(list_filter(coalesce(f.sp.events, []), lambda e: regexp_full_match(coalesce(e.name, ''),
               'gen_ai\.(system|user|assistant|tool)\.message|gen_ai\.choice'))) AS n_msg_events,
           ot_ts(f.sp.startTimeUnixNano) AS t0, ot_ts(f.sp.endTimeUnixNano) AS t1
    FROM ot_flat f
)
SELECT a.*,
       coalesce(op IN ('chat', 'text_completion', 'generate_content', 'completion'), false)
         OR coalesce(upper(oi_kind) = 'LLM', false) OR n_msg_events > 0
         OR (op IS NULL AND ot_get(attrs, 'gen_ai.input.messages') IS NOT NULL) AS is_llm,
       CASE WHEN upper(oi_kind) = 'LLM' THEN 'openinference'
            WHEN ot_get(attrs, 'gen_ai.input.messages') IS NOT NULL OR ot_get(attrs, 'gen_ai.output.messages') IS NOT NULL
                 THEN 'genai_attributes'
            WHEN n_msg_events > 0 THEN 'genai_events' ELSE 'genai_no_content' END AS source,
       ot_str(attrs, 'gen_ai.conversation.id') AS conv_id,
       CASE WHEN getvariable('otlp_conversation_attr') IS NOT NULL
            THEN coalesce(ot_str(attrs, getvariable('otlp_conversation_attr')),
                          ot_str(rattrs, getvariable('otlp_conversation_attr'))) END AS conv_named,
       ot_str(attrs, 'gen_ai.input.messages') AS in_json,
       ot_str(attrs, 'gen_ai.system_instructions') AS sys_json,
       ot_str(attrs, 'gen_ai.output.messages') AS out_json,
       lower(coalesce(ot_strs(ot_get(attrs, 'x-initiator'))[1], ot_strs(ot_get(attrs, 'http.request.header.x-initiator'))[1],
                      ot_strs(ot_get(attrs, 'http.request.header.X-Initiator'))[1])) AS initiator,
       coalesce(ot_str(attrs, 'gen_ai.response.model'), ot_str(attrs, 'gen_ai.request.model'),
                ot_str(attrs, 'llm.model_name')) AS model,
       try_cast(coalesce(ot_str(attrs, 'gen_ai.usage.input_tokens'), ot_str(attrs, 'llm.token_count.prompt')) AS BIGINT) AS tokens_in,
       try_cast(coalesce(ot_str(attrs, 'gen_ai.usage.output_tokens'), ot_str(attrs, 'llm.token_count.completion')) AS BIGINT) AS tokens_out,
       ot_strs(ot_get(attrs, 'gen_ai.response.finish_reasons')) AS finish_reasons,
       coalesce(ot_str(attrs, 'llm.finish_reason'),
                CASE WHEN json_valid(ot_str(attrs, 'output.value')) THEN ot_str(attrs, 'output.value')::JSON ->> '$.choices[0].finish_reason' END) AS oi_finish,
       coalesce(ot_str(attrs, 'gen_ai.response.id'),
                CASE WHEN json_valid(ot_str(attrs, 'output.value')) THEN ot_str(attrs, 'output.value')::JSON ->> '$.id' END) AS response_id,
       coalesce(sp.status.code::VARCHAR IN ('2', '"STATUS_CODE_ERROR"'), false) AS is_error
FROM a;

-- the messages of every LLM span: dir in / out, idx = place in its list
CREATE OR REPLACE TEMP MACRO ot_parts_text(parts) AS nullif(array_to_string(list_transform(
    list_filter(parts, lambda p: p ->> 'type' = 'text'), lambda p: coalesce(p ->> 'content', p ->> 'text')), chr(10)), '');
CREATE OR REPLACE TEMP MACRO ot_parts_calls(parts) AS list_transform(
    list_filter(parts, lambda p: p ->> 'type' = 'tool_call'),
    lambda p: {'id': p ->> 'id', 'name': p ->> 'name',
               'arguments': CASE WHEN json_type(json_extract(p, '$.arguments')) = 'VARCHAR' THEN p ->> 'arguments' ELSE (json_extract(p, '$.arguments'))::VARCHAR END});

CREATE OR REPLACE TEMP TABLE ot_msgs AS
WITH ga AS (   -- GenAI attributes
    SELECT fid, line, span_no, x.dir, x.i AS idx, x.m
    FROM (SELECT fid, line, span_no,
                 -- gen_ai.system_instructions (the system prompt sent apart: a list of parts) as input message 0
                 unnest(CASE WHEN json_valid(sys_json) AND json_type(sys_json) = 'ARRAY'
                             THEN [{'dir': 'in', 'i': 0, 'm': json_object('role', 'system', 'parts', sys_json::JSON)}] ELSE [] END
                        || list_transform(CASE WHEN json_valid(in_json) THEN json_extract(in_json, '$[*]') ELSE [] END,
                                       lambda m, i: {'dir': 'in', 'i': i, 'm': m})
                        || list_transform(CASE WHEN json_valid(out_json) THEN json_extract(out_json, '$[*]') ELSE [] END,
                                          lambda m, i: {'dir': 'out', 'i': i, 'm': m})) AS x
          FROM ot_spans WHERE is_llm AND source = 'genai_attributes')
), gap AS (
    SELECT fid, line, span_no, dir, idx, m ->> 'role' AS role,
           CASE WHEN json_type(json_extract(m, '$.parts')) = 'ARRAY' THEN json_extract(m, '$.parts[*]') ELSE [] END AS parts,
           m ->> 'finish_reason' AS finish_reason
    FROM ga
), ge AS (     -- GenAI span events
    SELECT fid, line, span_no, x.i AS idx, x.e.name AS name,
           coalesce(CASE WHEN json_valid(ot_str(x.e.attributes, 'gen_ai.event.content')) THEN ot_str(x.e.attributes, 'gen_ai.event.content')::JSON END,
                    json_object('content', ot_str(x.e.attributes, 'content'), 'tool_calls', ot_str(x.e.attributes, 'tool_calls'),
                                'id', ot_str(x.e.attributes, 'id'), 'finish_reason', ot_str(x.e.attributes, 'finish_reason'),
                                'message', CASE WHEN json_valid(ot_str(x.e.attributes, 'message')) THEN ot_str(x.e.attributes, 'message')::JSON END)) AS b
    FROM (SELECT fid, line, span_no, unnest(list_transform(list_filter(coalesce(sp.events, []), lambda e: regexp_full_match(coalesce(e.name, ''),
                     'gen_ai\.(system|user|assistant|tool)\.message|gen_ai\.choice')), lambda e, i: {'i': i, 'e': e})) AS x
          FROM ot_spans WHERE is_llm AND source = 'genai_events')
), gem AS (
    SELECT fid, line, span_no, CASE WHEN name = 'gen_ai.choice' THEN 'out' ELSE 'in' END AS dir, idx,
           CASE WHEN name = 'gen_ai.choice' THEN 'assistant' ELSE regexp_extract(name, 'gen_ai\.(\w+)\.message', 1) END AS role,
           coalesce(json_extract(b, '$.message'), b) AS msg, b ->> 'finish_reason' AS finish_reason
    FROM ge
), oi AS (     -- OpenInference flattened attributes
    SELECT fid, line, span_no, CASE r.d WHEN 'input' THEN 'in' ELSE 'out' END AS dir, r.i::INTEGER AS idx, r.f AS field, ot_val(x.value) AS val
    FROM (SELECT fid, line, span_no, x, regexp_extract(x.key, '^llm\.(input|output)_messages\.(\d+)\.message\.(.+)$', ['d', 'i', 'f']) AS r
          FROM (SELECT fid, line, span_no, unnest(attrs) AS x FROM ot_spans WHERE is_llm AND source = 'openinference'))
    WHERE r.d <> ''
), oi_calls AS (
    SELECT fid, line, span_no, dir, idx,
           list({'id': c_id, 'name': c_name, 'arguments': c_args} ORDER BY k) AS calls
    FROM (SELECT fid, line, span_no, dir, idx, regexp_extract(field, '^tool_calls\.(\d+)\.', 1)::INTEGER AS k,
                 max(val) FILTER (WHERE regexp_matches(field, '\.tool_call\.id$')) AS c_id,
                 max(val) FILTER (WHERE regexp_matches(field, '\.tool_call\.function\.name$')) AS c_name,
                 max(val) FILTER (WHERE regexp_matches(field, '\.tool_call\.function\.arguments$')) AS c_args
          FROM oi WHERE starts_with(field, 'tool_calls.') GROUP BY ALL)
    GROUP BY ALL
), oim AS (
    SELECT fid, line, span_no, dir, idx,
           max(val) FILTER (WHERE field = 'role') AS role,
           coalesce(max(val) FILTER (WHERE field = 'content'),
                    string_agg(val, chr(10) ORDER BY field) FILTER (WHERE regexp_matches(field, '^contents\.\d+\.message_content\.text$'))) AS text,
           max(val) FILTER (WHERE field = 'tool_call_id') AS tool_call_id
    FROM oi GROUP BY ALL
)
SELECT fid, line, span_no, dir, idx, role,
       CASE WHEN role = 'tool' THEN coalesce(ot_parts_text(parts), array_to_string(list_transform(
                 list_filter(parts, lambda p: p ->> 'type' = 'tool_call_response'),
                 lambda p: CASE WHEN json_type(json_extract(p, '$.response')) = 'VARCHAR' THEN p ->> 'response' ELSE (json_extract(p, '$.response'))::VARCHAR END), chr(10)))
            ELSE ot_parts_text(parts) END AS text,
       ot_parts_calls(parts) AS tool_calls,
       list_filter(parts, lambda p: p ->> 'type' = 'tool_call_response')[1] ->> 'id' AS tool_call_id,
       finish_reason
FROM gap
UNION ALL
SELECT fid, line, span_no, dir, idx, role, json_text(json_extract(msg, '$.content')), openai_tool_calls(json_extract(msg, '$.tool_calls')),
       coalesce(msg ->> 'tool_call_id', CASE WHEN role = 'tool' THEN msg ->> 'id' END), finish_reason
FROM gem
UNION ALL
SELECT m.fid, m.line, m.span_no, m.dir, m.idx, m.role, m.text, coalesce(c.calls, []), m.tool_call_id, NULL
FROM oim m LEFT JOIN oi_calls c USING (fid, line, span_no, dir, idx);

-- the events of each LLM span: its new input messages, then its one reply
CREATE OR REPLACE TEMP TABLE ot_ev AS
WITH s AS (
    SELECT p.*, NOT p.is_llm OR p.t0 IS NULL OR p.t1 IS NULL
                OR (p.in_json IS NOT NULL AND NOT json_valid(p.in_json))
                OR (p.out_json IS NOT NULL AND NOT json_valid(p.out_json)) AS unusable,
           (SELECT max(idx) FROM ot_msgs m WHERE m.fid = p.fid AND m.line = p.line AND m.span_no = p.span_no
                                               AND m.dir = 'in' AND m.role = 'assistant') AS last_asst
    FROM ot_spans p
), inp AS (
    SELECT m.fid, m.line, m.span_no, 0 AS grp, m.idx, m.role, m.text, m.tool_calls, m.tool_call_id, NULL AS finish_reason
    FROM ot_msgs m JOIN s USING (fid, line, span_no)
    WHERE NOT s.unusable AND m.dir = 'in' AND m.idx > coalesce(s.last_asst, -1)
      AND m.role IN ('user', 'tool', 'system', 'developer')
), outp AS (
    SELECT s.fid, s.line, s.span_no, 1 AS grp, 0 AS idx, 'assistant' AS role,
           coalesce(o.text, CASE WHEN s.is_error THEN s.sp.status.message END) AS text,
           coalesce(o.tool_calls, []) AS tool_calls, NULL AS tool_call_id,
           coalesce(o.finish_reason, s.finish_reasons[1], s.oi_finish, CASE WHEN s.is_error THEN 'error' END) AS finish_reason
    FROM s LEFT JOIN (SELECT * FROM ot_msgs WHERE dir = 'out' QUALIFY row_number() OVER (PARTITION BY fid, line, span_no ORDER BY idx) = 1) o
         USING (fid, line, span_no)
    WHERE s.is_llm AND NOT s.unusable
)
SELECT x.*,
       row_number() OVER (PARTITION BY x.fid, x.line ORDER BY x.span_no, x.grp, x.idx)::INTEGER AS part,
       x.grp = 0 AND x.idx = max(CASE WHEN x.grp = 0 AND x.role IN ('user', 'tool') THEN x.idx END)
                              OVER (PARTITION BY x.fid, x.line, x.span_no) AS is_last_new
FROM (SELECT * FROM inp UNION ALL SELECT * FROM outp) x;

-- every span's fate, then one fate per line
CREATE OR REPLACE TEMP TABLE ot_span_fates AS
SELECT fid, line, span_no,
       CASE WHEN NOT is_llm THEN 'skip' WHEN t0 IS NULL OR t1 IS NULL OR (in_json IS NOT NULL AND NOT json_valid(in_json))
                 OR (out_json IS NOT NULL AND NOT json_valid(out_json)) THEN 'reject' ELSE 'event' END AS fate,
       CASE WHEN NOT is_llm THEN coalesce(op, lower(oi_kind), 'other')
            WHEN t0 IS NULL OR t1 IS NULL THEN 'LLM span without start or end time'
            WHEN in_json IS NOT NULL AND NOT json_valid(in_json) THEN 'invalid JSON in gen_ai.input.messages'
            WHEN out_json IS NOT NULL AND NOT json_valid(out_json) THEN 'invalid JSON in gen_ai.output.messages' END AS label,
       'span ' || coalesce(sp.spanId, '?') || ' ' || left(coalesce(sp.name, ''), 80) AS excerpt
FROM ot_spans;

CREATE OR REPLACE TEMP TABLE ot_line_spans AS
SELECT fid, line, count(*) AS n_spans,
       count(*) FILTER (WHERE fate = 'event') AS n_llm, count(*) FILTER (WHERE fate = 'skip') AS n_skipped,
       count(*) FILTER (WHERE fate = 'reject') AS n_rejected,
       list_sort(list_distinct(list(label) FILTER (WHERE fate = 'skip'))) AS skip_kinds,
       list(label ORDER BY span_no) FILTER (WHERE fate = 'reject') AS reject_reasons,
       arg_min(excerpt, span_no) FILTER (WHERE fate = 'reject') AS reject_excerpt
FROM ot_span_fates GROUP BY ALL;

CREATE OR REPLACE TEMP TABLE fmt_fates AS
SELECT r.fid, r.line,
       CASE WHEN r.blank THEN 'skip' WHEN r.problem IS NOT NULL THEN 'reject'
            WHEN EXISTS (SELECT 1 FROM ot_ev e WHERE e.fid = r.fid AND e.line = r.line) THEN 'event'
            WHEN s.n_rejected > 0 THEN 'reject' ELSE 'skip' END AS fate,
       CASE WHEN r.blank THEN 'blank_line' WHEN r.problem IS NOT NULL THEN r.problem
            WHEN s.n_spans IS NULL THEN 'otlp:record_without_spans'
            WHEN s.n_rejected > 0 THEN s.reject_reasons[1]
            ELSE 'span:' || array_to_string(s.skip_kinds, '+') END AS label,
       CASE WHEN r.problem IS NOT NULL THEN coalesce(r.bad_excerpt, r.excerpt) ELSE s.reject_excerpt END AS excerpt
FROM ot_raw r LEFT JOIN ot_line_spans s USING (fid, line);

CREATE OR REPLACE TEMP TABLE fmt_events AS
SELECT e.fid, e.line, e.line AS last_line, e.part,
       1 AS n_records,
       coalesce(s.conv_id, s.conv_named, s.sp.traceId, f.stem || ':' || e.line || ':' || e.span_no) AS session_id,
       CASE WHEN e.grp = 0 THEN s.t0 ELSE s.t1 END AS ts, CASE WHEN e.grp = 0 THEN s.t0 ELSE s.t1 END AS ts_end,
       'per_message' AS ts_quality,
       CASE e.role WHEN 'developer' THEN 'system' ELSE e.role END AS role,
       CASE WHEN e.role = 'tool' THEN 'tool_result' ELSE 'message' END AS kind,
       e.text, e.tool_calls::STRUCT(id VARCHAR, name VARCHAR, arguments VARCHAR)[] AS tool_calls, e.tool_call_id,
       e.finish_reason, CASE WHEN e.is_last_new THEN s.initiator END AS initiator,
       CASE WHEN e.grp = 1 THEN s.response_id END AS message_id,
       s.sp.spanId AS record_id, s.sp.parentSpanId AS parent_id, NULL::VARCHAR AS turn_id,
       CASE WHEN e.grp = 1 THEN s.model END AS model, false AS is_sidechain,
       CASE WHEN e.grp = 1 THEN s.tokens_in END AS tokens_in, CASE WHEN e.grp = 1 THEN s.tokens_out END AS tokens_out,
       json_object('conversation_by', CASE WHEN s.conv_id IS NOT NULL THEN 'gen_ai.conversation.id'
                                           WHEN s.conv_named IS NOT NULL THEN 'attr:' || getvariable('otlp_conversation_attr')
                                           WHEN s.sp.traceId IS NOT NULL THEN 'trace' ELSE 'span' END,
                   'trace_id', s.sp.traceId, 'span_name', s.sp.name, 'scope', s.scope, 'source', s.source,
                   'request_start', s.t0, 'finish_reasons', s.finish_reasons, 'input_index', CASE WHEN e.grp = 0 THEN e.idx END,
                   'spans', CASE WHEN e.part = 1 THEN json_object('llm', t.n_llm, 'skipped', t.n_skipped, 'rejected', t.n_rejected,
                                                                  'skipped_kinds', t.skip_kinds, 'rejected_reasons', t.reject_reasons) END) AS meta
FROM ot_ev e JOIN ot_spans s USING (fid, line, span_no) JOIN ot_line_spans t USING (fid, line) JOIN batch_files f USING (fid);

-- spans name everything they need: nothing is carried to a later ingest of the grown file
CREATE OR REPLACE TEMP TABLE fmt_ctx AS
SELECT fid, ctx_session, ctx_model, ctx_turn FROM batch_files;
