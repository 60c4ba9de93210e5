-- Hermes Agent trajectories (trajectory_samples.jsonl / failed_trajectories.jsonl, ShareGPT) ->
-- fmt_events + fmt_fates.   Input: stage_lines, batch_files. One conversation per line:
-- {conversations: [{from: system|human|gpt|tool, value}], timestamp, model, completed}. Each turn is an
-- event of its line (part = 1-based turn index; the first event carries n_records = 1, the others 0,
-- so a line counts once); session_id = <folder>/<file stem>:<line> (one conversation a line).
--   system -> system context; human -> user message; tool -> tool tool_result (tool_call_id from the
--   JSON inside <tool_response>); gpt -> assistant message whose tool_calls are the JSON objects inside
--   <tool_call>...</tool_call> (id NULL: the format has none) and whose text is the value without the
--   <tool_call> blocks and without <think> reasoning (meta.has_think).
-- The one timestamp of a line (naive local time, read in the zone of the DuckDB variable `naive_tz`,
-- default UTC, stated in meta.ts_zone) is given to every turn: ts_quality = per_session.
CREATE OR REPLACE TEMP TABLE ht AS
SELECT s.fid, s.line, s.txt, s.blank, s.bad_excerpt,
       CASE WHEN s.txt IS NOT NULL AND NOT s.blank THEN parse_line(s.txt, '{
         "conversations":"JSON","timestamp":"VARCHAR","model":"VARCHAR","completed":"BOOLEAN","id":"VARCHAR"}') END AS j
FROM stage_lines s;

CREATE OR REPLACE TEMP TABLE fmt_fates AS
SELECT fid, line,
       CASE WHEN txt IS NULL OR (NOT blank AND j IS NULL) THEN 'reject'
            WHEN blank THEN 'skip'
            WHEN json_type(txt) <> 'OBJECT' OR json_type(j.conversations) IS DISTINCT FROM 'ARRAY' THEN 'reject'
            WHEN json_array_length(j.conversations) = 0 THEN 'skip'
            ELSE 'event' END AS fate,
       CASE WHEN txt IS NULL THEN 'invalid UTF-8'
            WHEN blank THEN 'blank_line'
            WHEN j IS NULL THEN 'invalid JSON'
            WHEN json_type(txt) <> 'OBJECT' THEN 'not a JSON object'
            WHEN json_type(j.conversations) IS DISTINCT FROM 'ARRAY' THEN 'missing or malformed field: conversations'
            WHEN json_array_length(j.conversations) = 0 THEN 'empty_conversation'
            ELSE 'conversation' END AS label,
       CASE WHEN txt IS NULL THEN bad_excerpt ELSE left(txt, 120) END AS excerpt
FROM ht;

CREATE OR REPLACE TEMP TABLE ht_turns AS
SELECT h.fid, h.line, x.i::INTEGER AS part, x.t ->> '$.from' AS sender,
       CASE WHEN json_type(x.t, '$.value') = 'VARCHAR' THEN x.t ->> '$.value' ELSE (x.t -> '$.value')::VARCHAR END AS val,
       h.j.model AS model, h.j.completed AS completed, h.j.id AS conv_id,
       coalesce(getvariable('naive_tz'), 'UTC') AS zone,
       CASE WHEN regexp_matches(h.j.timestamp, '(Z|[+-]\d\d:?\d\d)$') THEN try_cast(h.j.timestamp AS TIMESTAMPTZ)
            ELSE timezone(coalesce(getvariable('naive_tz'), 'UTC'), try_cast(h.j.timestamp AS TIMESTAMP)) END AS ts,
       NOT regexp_matches(coalesce(h.j.timestamp, ''), '(Z|[+-]\d\d:?\d\d)$') AS naive,
       coalesce(nullif(regexp_extract(f.file, '([^/\\]+)[/\\][^/\\]+$', 1), '') || '/', '') || f.stem || ':' || h.line AS session_id
FROM (SELECT ht.*, unnest(list_transform(json_extract(ht.j.conversations, '$[*]'), lambda t, i: {'i': i, 't': t})) AS x
      FROM ht JOIN fmt_fates USING (fid, line) WHERE fmt_fates.fate = 'event') h
JOIN batch_files f USING (fid);

CREATE OR REPLACE TEMP TABLE ht_parsed AS
SELECT *,
       regexp_extract_all(coalesce(val, ''), '(?s)<tool_call>\s*(.*?)\s*</tool_call>', 1) AS call_texts,
       regexp_matches(coalesce(val, ''), '<think>') AS has_think
FROM ht_turns;

CREATE OR REPLACE TEMP TABLE fmt_events AS
SELECT fid, line, line AS last_line, part, CASE WHEN part = 1 THEN 1 ELSE 0 END AS n_records, session_id,
       ts, ts AS ts_end, CASE WHEN ts IS NULL THEN 'none' ELSE 'per_session' END AS ts_quality,
       CASE sender WHEN 'human' THEN 'user' WHEN 'user' THEN 'user' WHEN 'gpt' THEN 'assistant'
                   WHEN 'assistant' THEN 'assistant' WHEN 'tool' THEN 'tool' ELSE 'system' END AS role,
       CASE sender WHEN 'human' THEN 'message' WHEN 'user' THEN 'message' WHEN 'gpt' THEN 'message'
                   WHEN 'assistant' THEN 'message' WHEN 'tool' THEN 'tool_result' WHEN 'system' THEN 'context'
                   ELSE 'system' END AS kind,
       CASE WHEN sender IN ('gpt', 'assistant') THEN
              nullif(trim(regexp_replace(regexp_replace(coalesce(val, ''), '(?s)<think>.*?</think>', '', 'g'),
                                         '(?s)<tool_call>.*?</tool_call>', '', 'g'), chr(10) || chr(13) || ' '), '')
            WHEN sender = 'tool' THEN trim(regexp_replace(coalesce(val, ''), '</?tool_response>', '', 'g'), chr(10) || chr(13) || ' ')
            ELSE val END AS text,
       CASE WHEN sender IN ('gpt', 'assistant') THEN list_transform(call_texts, lambda c: {
              'id': CASE WHEN json_valid(c) THEN coalesce(c ->> '$.id', c ->> '$.tool_call_id') END,
              'name': CASE WHEN json_valid(c) THEN c ->> '$.name' END,
              'arguments': CASE WHEN NOT json_valid(c) THEN c
                                WHEN json_type(c, '$.arguments') = 'VARCHAR' THEN c ->> '$.arguments'
                                ELSE (c -> '$.arguments')::VARCHAR END})
            ELSE [] END::STRUCT(id VARCHAR, name VARCHAR, arguments VARCHAR)[] AS tool_calls,
       CASE WHEN sender = 'tool' THEN
              (SELECT any_value(r ->> '$.tool_call_id') FROM (SELECT unnest(regexp_extract_all(coalesce(val, ''),
                     '(?s)<tool_response>\s*(.*?)\s*</tool_response>', 1)) AS r) WHERE json_valid(r)) END AS tool_call_id,
       NULL::VARCHAR AS finish_reason, NULL::VARCHAR AS initiator, NULL::VARCHAR AS message_id,
       NULL::VARCHAR AS record_id, NULL::VARCHAR AS parent_id, NULL::VARCHAR AS turn_id,
       CASE WHEN sender IN ('gpt', 'assistant') THEN model END AS model, false AS is_sidechain,
       NULL::BIGINT AS tokens_in, NULL::BIGINT AS tokens_out,
       json_object('from', sender, 'completed', completed, 'conversation_id', conv_id, 'has_think', has_think,
                   'bad_tool_calls', len(list_filter(call_texts, lambda c: NOT json_valid(c))),
                   'ts_naive', naive, 'ts_zone', zone) AS meta
FROM ht_parsed;

CREATE OR REPLACE TEMP TABLE fmt_ctx AS
SELECT fid, NULL::VARCHAR AS ctx_session, NULL::VARCHAR AS ctx_model, NULL::VARCHAR AS ctx_turn FROM batch_files;
