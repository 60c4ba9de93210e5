-- OpenAI chat-completions message logs (Hermes session JSONL and friends) -> fmt_events + fmt_fates + fmt_ctx.
-- Two shapes: one message per line ({role, content, tool_calls, tool_call_id, finish_reason, timestamp}),
-- or one whole conversation per line ({messages: [...], optional response/choices}). An x-initiator /
-- initiator value is read from the message, its `headers`, or (conversation lines) the record, where it
-- belongs to the conversation's last user message.   Input: stage_lines, batch_files.
-- A message line is parsed once, and only its final fields are kept (text, calls: the parsed record
-- is not stored); only conversation lines parse their messages a second time.
-- the event fields of one chat message: a message line's record, or one element of a conversation
CREATE OR REPLACE TEMP MACRO oc_message(p) AS {
    'role': p.role,
    'text': json_text(p.content),
    'tool_calls': CASE WHEN json_type(p.tool_calls) = 'ARRAY' THEN list_transform(
              json_transform(p.tool_calls, '[{"id":"VARCHAR","call_id":"VARCHAR","name":"VARCHAR","arguments":"JSON",
                                              "function":{"name":"VARCHAR","arguments":"JSON"}}]'),
              lambda c: {'id': coalesce(c.id, c.call_id), 'name': coalesce(c.function.name, c.name),
                         'arguments': CASE WHEN json_type(coalesce(c.function.arguments, c.arguments)) = 'VARCHAR'
                                           THEN coalesce(c.function.arguments, c.arguments) ->> '$'
                                           ELSE coalesce(c.function.arguments, c.arguments)::VARCHAR END})
            ELSE [] END,
    'tool_calls_field': json_type(p.tool_calls),
    'tool_call_id': p.tool_call_id, 'finish_reason': p.finish_reason,
    't': coalesce(p.timestamp, p.ts, p.created_at, p.created),
    'model': p.model,
    'initiator': coalesce(p."x-initiator", p.initiator, p.headers ->> 'x-initiator', p.headers ->> 'X-Initiator'),
    'id': p.id, 'name': p.name, 'session_id': coalesce(p.session_id, p.conversation_id),
    'has_reasoning': p.reasoning IS NOT NULL AND p.reasoning <> '',
    'tokens_in': coalesce(p.usage.prompt_tokens, p.usage.input_tokens),
    'tokens_out': coalesce(p.usage.completion_tokens, p.usage.output_tokens)};

CREATE OR REPLACE TEMP TABLE oc AS
SELECT fid, line, blank, bad_excerpt, j IS NOT NULL AS parsed,
       CASE WHEN NOT blank AND (j IS NULL OR (j.role IS NULL AND j.messages IS NULL)) THEN left(txt, 120) END AS excerpt,
       CASE WHEN NOT blank AND j IS NOT NULL AND j.role IS NULL AND j.messages IS NULL THEN json_type(txt) END AS shape,
       j.role, j.model, j.messages, j.choices, j.response,
       coalesce(j."x-initiator", j.initiator, j.headers ->> 'x-initiator', j.headers ->> 'X-Initiator') AS rec_initiator,
       coalesce(j.session_id, j.conversation_id, j.id) AS rec_session,
       oc_message(j) AS m
FROM (SELECT s.fid, s.line, s.txt, s.blank, s.bad_excerpt,
             CASE WHEN s.txt IS NOT NULL AND NOT s.blank THEN parse_line(s.txt, '{
               "role":"VARCHAR","content":"JSON","tool_calls":"JSON","tool_call_id":"VARCHAR","finish_reason":"VARCHAR",
               "timestamp":"JSON","ts":"JSON","created_at":"JSON","created":"JSON","model":"VARCHAR",
               "x-initiator":"VARCHAR","initiator":"VARCHAR","headers":"JSON","id":"VARCHAR","name":"VARCHAR",
               "session_id":"VARCHAR","conversation_id":"VARCHAR","reasoning":"VARCHAR",
               "usage":{"prompt_tokens":"BIGINT","completion_tokens":"BIGINT","input_tokens":"BIGINT","output_tokens":"BIGINT"},
               "messages":"JSON","choices":"JSON","response":"JSON"}') END AS j
      FROM stage_lines s);

CREATE OR REPLACE TEMP TABLE fmt_fates AS
SELECT fid, line,
       CASE WHEN bad_excerpt IS NOT NULL OR (NOT blank AND NOT parsed) THEN 'reject'
            WHEN blank THEN 'skip'
            WHEN json_type(messages) = 'ARRAY' THEN (CASE WHEN usable_msgs THEN 'event'
                                                          WHEN json_array_length(messages) > 0 THEN 'reject' ELSE 'skip' END)
            WHEN role IS NULL THEN 'reject'
            WHEN role IN ('user', 'assistant', 'tool', 'system', 'developer', 'function') THEN 'event'
            ELSE 'skip' END AS fate,
       CASE WHEN bad_excerpt IS NOT NULL THEN 'invalid UTF-8'
            WHEN blank THEN 'blank_line'
            WHEN NOT parsed THEN 'invalid JSON'
            WHEN json_type(messages) = 'ARRAY' AND NOT usable_msgs AND json_array_length(messages) > 0
                 THEN 'no message with a known role in messages'
            WHEN json_type(messages) = 'ARRAY' THEN 'empty_conversation'
            WHEN role IS NULL AND shape <> 'OBJECT' THEN 'not a JSON object'
            WHEN role IS NULL THEN 'missing field: role'
            WHEN role = 'session_meta' THEN 'session_meta'
            ELSE 'role:' || role END AS label,
       coalesce(bad_excerpt, excerpt, CASE WHEN json_type(messages) = 'ARRAY' AND NOT usable_msgs
                                           THEN left(messages::VARCHAR, 120) END) AS excerpt
FROM (SELECT *,  -- a conversation line becomes events only through messages with a known role (as in fmt_events)
             coalesce(len(list_filter(json_extract(messages, '$[*]'), lambda mm: (mm ->> 'role') IN
                          ('user', 'assistant', 'tool', 'system', 'developer', 'function'))) > 0, false)
             OR coalesce(CASE WHEN json_type(coalesce(response, choices) -> '$.choices[0].message') = 'OBJECT'
                              THEN response ->> '$.choices[0].message.role'
                              WHEN json_type(choices -> '$[0].message') = 'OBJECT' THEN choices ->> '$[0].message.role' END
                         IN ('user', 'assistant', 'tool', 'system', 'developer', 'function'), false) AS usable_msgs
      FROM oc);

-- every message with its place: part 0 for message lines, 1..n inside a conversation line
CREATE OR REPLACE TEMP VIEW oc_msgs AS
SELECT o.fid, o.line, 0 AS part, false AS in_conversation, o.m, NULL::VARCHAR AS rec_initiator,
       NULL::VARCHAR AS rec_session, NULL::VARCHAR AS rec_model, false AS is_last_user
FROM oc o JOIN fmt_fates f USING (fid, line)
WHERE f.fate = 'event' AND o.messages IS NULL
UNION ALL
SELECT fid, line, x.i AS part, true,
       oc_message(json_transform(x.m, '{
               "role":"VARCHAR","content":"JSON","tool_calls":"JSON","tool_call_id":"VARCHAR","finish_reason":"VARCHAR",
               "timestamp":"JSON","ts":"JSON","created_at":"JSON","created":"JSON","model":"VARCHAR",
               "x-initiator":"VARCHAR","initiator":"VARCHAR","headers":"JSON","id":"VARCHAR","name":"VARCHAR",
               "session_id":"VARCHAR","conversation_id":"VARCHAR","reasoning":"VARCHAR",
               "usage":{"prompt_tokens":"BIGINT","completion_tokens":"BIGINT","input_tokens":"BIGINT","output_tokens":"BIGINT"},
               "messages":"JSON","choices":"JSON","response":"JSON"}')),
       rec_initiator, rec_session, model,
       x.i = list_max(list_filter(list_transform(json_extract(messages, '$[*]'),
                 lambda mm, ii: CASE WHEN mm ->> 'role' = 'user' THEN ii END), lambda v: v IS NOT NULL))
FROM (SELECT o.fid, o.line, o.messages, o.rec_initiator, o.rec_session, o.model,
             unnest(list_transform(json_extract(o.messages, '$[*]')
                      || CASE WHEN json_type(coalesce(o.response, o.choices) -> '$.choices[0].message') = 'OBJECT'
                              THEN [json_merge_patch(o.response -> '$.choices[0].message',
                                     json_object('finish_reason', o.response ->> '$.choices[0].finish_reason'))]
                              WHEN json_type(o.choices -> '$[0].message') = 'OBJECT'
                              THEN [json_merge_patch(o.choices -> '$[0].message',
                                     json_object('finish_reason', o.choices ->> '$[0].finish_reason'))]
                              ELSE [] END,
                    lambda mm, ii: {'i': ii, 'm': mm})) AS x
      FROM oc o JOIN fmt_fates f USING (fid, line)
      WHERE f.fate = 'event' AND json_type(o.messages) = 'ARRAY');

CREATE OR REPLACE TEMP VIEW fmt_events AS
SELECT q.fid, q.line, q.line AS last_line, q.part, 1 AS n_records,
       coalesce(q.m.session_id, q.rec_session,
                CASE WHEN q.in_conversation THEN f.stem || ':' || q.line END, f.ctx_session, f.stem) AS session_id,
       parse_ts(q.m.t) AS ts, parse_ts(q.m.t) AS ts_end,
       CASE WHEN q.m.t IS NULL THEN 'none' ELSE 'per_message' END AS ts_quality,
       CASE q.m.role WHEN 'developer' THEN 'system' WHEN 'function' THEN 'tool' ELSE q.m.role END AS role,
       CASE WHEN q.m.role IN ('tool', 'function') THEN 'tool_result' ELSE 'message' END AS kind,
       q.m.text, q.m.tool_calls, q.m.tool_call_id, q.m.finish_reason,
       lower(coalesce(q.m.initiator, CASE WHEN q.is_last_user THEN q.rec_initiator END)) AS initiator,
       q.m.id AS message_id, NULL::VARCHAR AS record_id, NULL::VARCHAR AS parent_id, NULL::VARCHAR AS turn_id,
       CASE WHEN q.m.role = 'assistant' THEN coalesce(q.m.model, q.rec_model, mm.meta_model, f.ctx_model) END AS model,
       false AS is_sidechain, q.m.tokens_in, q.m.tokens_out,
       json_object('ts_naive', json_type(q.m.t) = 'VARCHAR' AND NOT regexp_matches(q.m.t ->> '$', '(Z|[+-]\d\d:?\d\d)$'),
                   'has_reasoning', q.m.has_reasoning,
                   'tool_calls_field', q.m.tool_calls_field, 'name', q.m.name,
                   'in_conversation', q.in_conversation) AS meta
FROM oc_msgs q
JOIN batch_files f USING (fid)
LEFT JOIN (SELECT fid, arg_max(model, line) AS meta_model FROM oc WHERE role = 'session_meta' GROUP BY fid) mm USING (fid)
WHERE q.m.role IN ('user', 'assistant', 'tool', 'system', 'developer', 'function');

-- what a later ingest of this file's tail needs to know: the model named by a session_meta line
CREATE OR REPLACE TEMP TABLE fmt_ctx AS
SELECT f.fid, f.ctx_session, coalesce(m.meta_model, f.ctx_model) AS ctx_model, f.ctx_turn
FROM batch_files f
LEFT JOIN (SELECT fid, arg_max(model, line) AS meta_model FROM oc WHERE role = 'session_meta' GROUP BY fid) m USING (fid);
