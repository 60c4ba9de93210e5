-- opencode session -> fmt_events + fmt_fates.   Input: stage_lines, stage_doc, batch_files.
-- The file is one JSON document: what `opencode export <sessionID>` writes, {info: <session>, messages:
-- [{info: <message>, parts: [<part>]}]}, or the bare list [{info, parts}] the server's
-- GET /session/:id/message returns. Each element of the message list is a record numbered 1.. (line).
-- Message info (sst/opencode packages/opencode/src/session/message-v2.ts): {id, sessionID,
-- role: user|assistant, time{created, completed} (epoch ms), parentID, modelID, providerID, mode/agent
-- ("compaction" for the summary call), finish ("stop" | "tool-calls" | "length" ...), error, summary,
-- tokens{input, output, reasoning, cache{read, write}}, cost}. Parts: text {text, synthetic, ignored,
-- metadata}, tool {callID, tool, state{status, input, output, error, time{start, end}}}, file,
-- reasoning, step-start, step-finish, compaction {auto, overflow}, ...
-- Events of one message share its line (part 1..n, as multi-message records do): a user message -> one
-- user event (text = the text parts a person wrote; parts opencode adds itself are synthetic: when only
-- synthetic text is there, that text, and meta.synthetic = true); an assistant message (one model call)
-- -> one assistant event (text parts; tool parts as tool_calls; finish) followed by one tool_result event
-- per tool part that finished (state completed / error; its output, ts = state.time.end). The automatic
-- "Continue if you have next steps ..." opencode adds after an auto-compaction carries
-- metadata.compaction_continue (meta.compaction_continue); a compaction request (a user message holding a
-- compaction part) sets meta.compaction / meta.compaction_auto. session_id = info.sessionID, else the
-- document's info.id, else the file stem.
CREATE OR REPLACE TEMP TABLE oc_el AS
SELECT * FROM doc_elements('$')
UNION ALL
SELECT * FROM doc_elements('$.messages');

CREATE OR REPLACE TEMP TABLE oc_j AS
SELECT fid, line, e, etype,
       CASE WHEN etype = 'OBJECT' THEN try(json_transform(e, '{"info":{"id":"VARCHAR","sessionID":"VARCHAR","role":"VARCHAR",
         "time":{"created":"JSON","completed":"JSON"},"parentID":"VARCHAR","modelID":"VARCHAR","providerID":"VARCHAR",
         "mode":"VARCHAR","agent":"VARCHAR","finish":"VARCHAR","error":"JSON","summary":"JSON","cost":"DOUBLE",
         "tokens":{"input":"BIGINT","output":"BIGINT","reasoning":"BIGINT","cache":{"read":"BIGINT","write":"BIGINT"}}},
         "parts":[{"id":"VARCHAR","type":"VARCHAR","text":"VARCHAR","synthetic":"BOOLEAN","ignored":"BOOLEAN",
                   "metadata":"JSON","tool":"VARCHAR","callID":"VARCHAR","auto":"BOOLEAN","mime":"VARCHAR",
                   "state":{"status":"VARCHAR","input":"JSON","output":"JSON","error":"JSON",
                            "time":{"start":"JSON","end":"JSON"}}}]}')) END AS j
FROM oc_el;

CREATE OR REPLACE TEMP TABLE fmt_fates AS
-- the document itself: unreadable, or neither a message list nor an object holding one
SELECT fid, 1 AS line, 'reject' AS fate,
       coalesce(problem, 'not an opencode session (no message list)') AS label, excerpt
FROM stage_doc
WHERE NOT blank AND (problem IS NOT NULL OR NOT (shape = 'ARRAY' OR json_type(txt, '$.messages') = 'ARRAY'))
UNION ALL
SELECT fid, line,
       CASE WHEN etype <> 'OBJECT' OR j IS NULL OR j.info IS NULL OR j.info.role IS NULL THEN 'reject'
            WHEN j.info.role IN ('user', 'assistant') THEN 'event' ELSE 'skip' END,
       CASE WHEN etype <> 'OBJECT' THEN 'not a JSON object'
            WHEN j IS NULL THEN 'malformed message'
            WHEN j.info IS NULL THEN 'missing field: info'
            WHEN j.info.role IS NULL THEN 'missing field: info.role'
            ELSE 'role:' || j.info.role END,
       CASE WHEN etype <> 'OBJECT' OR j IS NULL OR j.info IS NULL OR j.info.role IS NULL THEN left(e::VARCHAR, 120) END
FROM oc_j;

CREATE OR REPLACE TEMP TABLE oc_msg AS
SELECT o.fid, o.line, o.j.info AS info, coalesce(o.j.parts, []) AS parts,
       coalesce(o.j.info.sessionID, d.txt ->> '$.info.id', f.stem) AS session_id,
       list_filter(coalesce(o.j.parts, []), lambda p: p.type = 'text' AND NOT coalesce(p.ignored, false)) AS texts,
       list_filter(coalesce(o.j.parts, []), lambda p: p.type = 'tool') AS tools
FROM oc_j o JOIN fmt_fates t USING (fid, line) JOIN batch_files f USING (fid)
LEFT JOIN stage_doc d ON d.fid = o.fid AND d.shape = 'OBJECT'
WHERE t.fate = 'event';

CREATE OR REPLACE TEMP TABLE fmt_events AS
-- user messages
SELECT fid, line, line AS last_line, 1 AS part, 1 AS n_records, session_id,
       parse_ts(info.time.created) AS ts, parse_ts(info.time.created) AS ts_end,
       CASE WHEN parse_ts(info.time.created) IS NULL THEN 'none' ELSE 'per_message' END AS ts_quality,
       'user' AS role, 'message' AS kind,
       coalesce(nullif(array_to_string(list_transform(list_filter(texts, lambda p: NOT coalesce(p.synthetic, false)),
                                                      lambda p: p.text), chr(10)), ''),
                nullif(array_to_string(list_transform(texts, lambda p: p.text), chr(10)), '')) AS text,
       []::STRUCT(id VARCHAR, name VARCHAR, arguments VARCHAR)[] AS tool_calls, NULL::VARCHAR AS tool_call_id,
       NULL::VARCHAR AS finish_reason, NULL::VARCHAR AS initiator, info.id AS message_id,
       info.id AS record_id, info.parentID AS parent_id, NULL::VARCHAR AS turn_id, info.modelID AS model,
       false AS is_sidechain, NULL::BIGINT AS tokens_in, NULL::BIGINT AS tokens_out,
       json_object('opencode_role', 'user', 'agent', coalesce(info.agent, info.mode),
                   'synthetic', len(texts) > 0 AND len(list_filter(texts, lambda p: NOT coalesce(p.synthetic, false))) = 0,
                   'compaction_continue', len(list_filter(texts, lambda p: (p.metadata ->> '$.compaction_continue') = 'true')) > 0,
                   'compaction', len(list_filter(parts, lambda p: p.type = 'compaction')) > 0,
                   'compaction_auto', len(list_filter(parts, lambda p: p.type = 'compaction' AND coalesce(p.auto, false))) > 0,
                   'n_files', len(list_filter(parts, lambda p: p.type = 'file')),
                   'part_types', list_transform(parts, lambda p: p.type)) AS meta
FROM oc_msg WHERE info.role = 'user'
UNION ALL
-- assistant messages: one model call each
SELECT fid, line, line, 1, 1, session_id,
       parse_ts(info.time.created), coalesce(parse_ts(info.time.completed), parse_ts(info.time.created)),
       CASE WHEN parse_ts(info.time.created) IS NULL THEN 'none' ELSE 'per_message' END,
       'assistant', 'message',
       nullif(array_to_string(list_transform(list_filter(texts, lambda p: NOT coalesce(p.synthetic, false)),
                                             lambda p: p.text), chr(10)), ''),
       list_transform(tools, lambda p: {'id': p.callID, 'name': p.tool, 'arguments': p.state.input::VARCHAR}),
       NULL, coalesce(info.finish, CASE WHEN info.error IS NOT NULL THEN 'error' END), NULL, info.id, info.id,
       info.parentID, NULL, info.modelID, false,
       info.tokens.input + coalesce(info.tokens.cache.read, 0) + coalesce(info.tokens.cache.write, 0),
       info.tokens.output,
       json_object('opencode_role', 'assistant', 'agent', coalesce(info.agent, info.mode), 'mode', info.mode,
                   'providerID', info.providerID, 'summary', info.summary, 'error', info.error ->> '$.name',
                   'cost', info.cost, 'tokens_reasoning', info.tokens.reasoning,
                   'part_types', list_transform(parts, lambda p: p.type))
FROM oc_msg WHERE info.role = 'assistant'
UNION ALL
-- the results of the model call's tool parts
SELECT fid, line, line, 1 + k::INTEGER, 1, session_id,
       coalesce(parse_ts(p.state.time."end"), parse_ts(info.time.completed), parse_ts(info.time.created)),
       coalesce(parse_ts(p.state.time."end"), parse_ts(info.time.completed), parse_ts(info.time.created)),
       CASE WHEN coalesce(parse_ts(p.state.time."end"), parse_ts(info.time.created)) IS NULL THEN 'none' ELSE 'per_message' END,
       'tool', 'tool_result',
       coalesce(json_text(p.state.output), json_text(p.state.error), p.state.error ->> '$.message',
                p.state.output::VARCHAR, p.state.error::VARCHAR),
       [], p.callID, NULL, NULL, info.id, p.id, info.id, NULL, NULL, false, NULL, NULL,
       json_object('opencode_tool', p.tool, 'status', p.state.status, 'is_error', p.state.status = 'error')
FROM (SELECT *, unnest(list_filter(tools, lambda t: t.state.status IN ('completed', 'error'))) AS p,
             generate_subscripts(list_filter(tools, lambda t: t.state.status IN ('completed', 'error')), 1) AS k
      FROM oc_msg WHERE info.role = 'assistant');

-- the whole file is re-read on every change: nothing to carry
CREATE OR REPLACE TEMP TABLE fmt_ctx AS
SELECT fid, NULL::VARCHAR AS ctx_session, NULL::VARCHAR AS ctx_model, NULL::VARCHAR AS ctx_turn FROM batch_files;
