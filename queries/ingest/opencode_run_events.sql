-- `opencode run --format json` event stream (what benchmark harnesses capture from stdout, often saved as
-- .log / .txt / .jsonl) -> fmt_events + fmt_fates.   Input: stage_lines, batch_files.
-- Writer: sst/opencode packages/opencode/src/cli/cmd/run.ts, emit(type, data): one line
-- {type, timestamp (epoch ms), sessionID, ...data} per finished part of the session's assistant messages:
--   step_start  {part: step-start {id, sessionID, messageID, snapshot}}   a model call begins
--   text        {part: text {id, messageID, text, synthetic, time{start, end}}}   (emitted once time.end is set)
--   reasoning   {part: reasoning {...text}}   (only with --thinking)
--   tool_use    {part: tool {id, messageID, callID, tool, state{status completed|error, input, output,
--                error, title, metadata, time{start, end}}}}
--   step_finish {part: step-finish {id, messageID, reason ("tool-calls" | "stop" | "length" ...), snapshot,
--                cost, tokens{input, output, reasoning, cache{read, write}}}}   the model call ended
--   error       {error: {name, data{message}}}   a session error (API error, abort ...)
-- The prompt itself is not in the stream (run.ts sends it; only the session's parts come back), so a
-- session here holds the model's side: each model call and the results of its tools.
-- Mapping: the lines of one assistant message (part.messageID; without one, the lines since the last
-- step_start) are ONE assistant event (line = first, last_line = last, n_records = its lines other than
-- tool_use lines that give a result): text = its text parts (not synthetic), tool_calls = its tool_use
-- parts, finish_reason = the step_finish reason (as opencode_events.sql maps info.finish: "tool-calls" ->
-- tool_calls, "stop" -> stop), tokens from step_finish; ts from the line timestamps. Each tool_use with
-- status completed / error is also a tool_result event on its own line (part 1). error -> a system event.
-- Plain-text lines (start-up messages before the first record, permission notices and log lines between
-- records: anything not starting with "{") are knowingly skipped as startup_text / interleaved_text.
-- workflow_finished (a run --workflow summary) -> skip; any other type -> skip unknown_shape:type <t>.
-- The file is re-read whole when it changes (appendable = false).
CREATE OR REPLACE TEMP TABLE ocr AS
SELECT s.fid, s.line, s.txt, s.blank, s.bad_excerpt,
       s.txt IS NOT NULL AND NOT s.blank AND NOT starts_with(ltrim(s.txt), '{') AS plain,
       CASE WHEN s.txt IS NOT NULL AND NOT s.blank AND starts_with(ltrim(s.txt), '{') THEN parse_line(s.txt, '{
         "type":"VARCHAR","timestamp":"JSON","sessionID":"VARCHAR","error":"JSON",
         "part":{"id":"VARCHAR","sessionID":"VARCHAR","messageID":"VARCHAR","type":"VARCHAR","text":"VARCHAR",
                 "synthetic":"BOOLEAN","reason":"VARCHAR","cost":"DOUBLE",
                 "tokens":{"input":"BIGINT","output":"BIGINT","reasoning":"BIGINT","cache":{"read":"BIGINT","write":"BIGINT"}},
                 "tool":"VARCHAR","callID":"VARCHAR",
                 "state":{"status":"VARCHAR","input":"JSON","output":"JSON","error":"JSON","title":"VARCHAR",
                          "time":{"start":"JSON","end":"JSON"}}}}') END AS j
FROM stage_lines s;

CREATE OR REPLACE TEMP TABLE fmt_fates AS
WITH first_rec AS (SELECT fid, min(line) AS l FROM ocr WHERE j IS NOT NULL GROUP BY fid)
SELECT o.fid, o.line,
       CASE WHEN o.txt IS NULL THEN 'reject'
            WHEN o.blank OR o.plain THEN 'skip'
            WHEN o.j IS NULL THEN 'reject'
            WHEN json_type(o.txt) <> 'OBJECT' THEN 'reject'
            WHEN o.j.type IS NULL THEN 'reject'
            WHEN o.j.type IN ('step_start', 'step_finish', 'text', 'reasoning', 'tool_use') AND o.j.part IS NULL THEN 'reject'
            WHEN o.j.type IN ('step_start', 'step_finish', 'text', 'reasoning', 'tool_use', 'error') THEN 'event'
            ELSE 'skip' END AS fate,
       CASE WHEN o.txt IS NULL THEN 'invalid UTF-8'
            WHEN o.blank THEN 'blank_line'
            WHEN o.plain AND (r.l IS NULL OR o.line < r.l) THEN 'startup_text'
            WHEN o.plain THEN 'interleaved_text'
            WHEN o.j IS NULL THEN 'invalid JSON'
            WHEN json_type(o.txt) <> 'OBJECT' THEN 'not a JSON object'
            WHEN o.j.type IS NULL THEN 'missing field: type'
            WHEN o.j.type IN ('step_start', 'step_finish', 'text', 'reasoning', 'tool_use') AND o.j.part IS NULL THEN 'missing field: part'
            WHEN o.j.type IN ('step_start', 'step_finish', 'text', 'reasoning', 'tool_use', 'error') THEN o.j.type
            WHEN o.j.type = 'workflow_finished' THEN 'workflow_finished'
            ELSE 'unknown_shape:type ' || o.j.type END AS label,
       CASE WHEN o.txt IS NULL THEN o.bad_excerpt ELSE left(o.txt, 120) END AS excerpt
FROM ocr o LEFT JOIN first_rec r USING (fid);

-- the records of the model's messages, with their message key
CREATE OR REPLACE TEMP TABLE ocr_parts AS
SELECT fid, line, j, coalesce(j.sessionID, j.part.sessionID) AS sid,
       coalesce(j.part.messageID,
                'step:' || sum(CASE WHEN j.type = 'step_start' THEN 1 ELSE 0 END) OVER (PARTITION BY fid ORDER BY line)) AS msg,
       j.type = 'tool_use' AND j.part.state.status IN ('completed', 'error') AS has_result
FROM (SELECT o.fid, o.line, o.j FROM ocr o JOIN fmt_fates t USING (fid, line)
      WHERE t.fate = 'event' AND o.j.type <> 'error');

CREATE OR REPLACE TEMP TABLE fmt_events AS
SELECT m.fid, m.line, m.last_line, 0 AS part, m.n_records, coalesce(m.sid, f.stem) AS session_id,
       m.ts, m.ts_end, CASE WHEN m.ts IS NULL THEN 'none' ELSE 'per_message' END AS ts_quality,
       'assistant' AS role, 'message' AS kind, m.text, m.tool_calls,
       NULL::VARCHAR AS tool_call_id, m.finish_reason, NULL::VARCHAR AS initiator, m.message_id,
       m.record_id, NULL::VARCHAR AS parent_id, NULL::VARCHAR AS turn_id, NULL::VARCHAR AS model,
       false AS is_sidechain, m.tokens_in, m.tokens_out, m.meta
FROM (SELECT fid, min(line) AS line, max(line) AS last_line,
             greatest(count(*) FILTER (WHERE NOT has_result), 0)::INTEGER AS n_records,
             any_value(sid) AS sid, min(parse_ts(j.timestamp)) AS ts, max(parse_ts(j.timestamp)) AS ts_end,
             nullif(string_agg(j.part.text, chr(10) ORDER BY line)
                    FILTER (WHERE j.type = 'text' AND NOT coalesce(j.part.synthetic, false) AND j.part.text <> ''), '') AS text,
             coalesce(list({'id': j.part.callID, 'name': j.part.tool, 'arguments': j.part.state.input::VARCHAR} ORDER BY line)
                      FILTER (WHERE j.type = 'tool_use'), [])::STRUCT(id VARCHAR, name VARCHAR, arguments VARCHAR)[] AS tool_calls,
             arg_max(j.part.reason, line) FILTER (WHERE j.type = 'step_finish') AS finish_reason,
             any_value(j.part.messageID) AS message_id, arg_min(j.part.id, line) AS record_id,
             arg_max(j.part.tokens.input + coalesce(j.part.tokens.cache.read, 0) + coalesce(j.part.tokens.cache.write, 0), line)
                 FILTER (WHERE j.type = 'step_finish') AS tokens_in,
             arg_max(j.part.tokens.output, line) FILTER (WHERE j.type = 'step_finish') AS tokens_out,
             json_object('opencode_shape', 'run_stream',
                         'step_finished', bool_or(j.type = 'step_finish'),
                         'cost', arg_max(j.part.cost, line) FILTER (WHERE j.type = 'step_finish'),
                         'tokens_reasoning', arg_max(j.part.tokens.reasoning, line) FILTER (WHERE j.type = 'step_finish'),
                         'n_reasoning', count(*) FILTER (WHERE j.type = 'reasoning'),
                         'part_types', list(j.type ORDER BY line)) AS meta
      FROM ocr_parts GROUP BY fid, sid, msg) m
JOIN batch_files f USING (fid)
UNION ALL
-- the results of the message's tool calls, each on its tool_use line
SELECT p.fid, p.line, p.line, 1, 1, coalesce(p.sid, f.stem),
       coalesce(parse_ts(p.j.part.state.time."end"), parse_ts(p.j.timestamp)),
       coalesce(parse_ts(p.j.part.state.time."end"), parse_ts(p.j.timestamp)),
       CASE WHEN coalesce(parse_ts(p.j.part.state.time."end"), parse_ts(p.j.timestamp)) IS NULL THEN 'none' ELSE 'per_message' END,
       'tool', 'tool_result',
       coalesce(json_text(p.j.part.state.output), json_text(p.j.part.state.error), p.j.part.state.error ->> '$.message',
                p.j.part.state.output::VARCHAR, p.j.part.state.error::VARCHAR),
       []::STRUCT(id VARCHAR, name VARCHAR, arguments VARCHAR)[], p.j.part.callID, NULL, NULL,
       p.j.part.messageID, p.j.part.id, p.j.part.messageID, NULL, NULL, false, NULL, NULL,
       json_object('opencode_tool', p.j.part.tool, 'status', p.j.part.state.status,
                   'is_error', p.j.part.state.status = 'error', 'title', p.j.part.state.title)
FROM ocr_parts p JOIN batch_files f USING (fid)
WHERE p.has_result
UNION ALL
-- session errors
SELECT o.fid, o.line, o.line, 0, 1, coalesce(o.j.sessionID, f.stem),
       parse_ts(o.j.timestamp), parse_ts(o.j.timestamp),
       CASE WHEN parse_ts(o.j.timestamp) IS NULL THEN 'none' ELSE 'per_message' END, 'system', 'system',
       coalesce(o.j.error ->> '$.data.message', o.j.error ->> '$.message', o.j.error ->> '$.name', json_text(o.j.error)),
       []::STRUCT(id VARCHAR, name VARCHAR, arguments VARCHAR)[], NULL, 'error', NULL, NULL, NULL, NULL, NULL, NULL,
       false, NULL, NULL,
       json_object('opencode_event', 'error', 'error_name', o.j.error ->> '$.name')
FROM ocr o JOIN fmt_fates t USING (fid, line) JOIN batch_files f USING (fid)
WHERE t.fate = 'event' AND o.j.type = 'error';

-- the whole file is re-read on every change: nothing to carry
CREATE OR REPLACE TEMP TABLE fmt_ctx AS
SELECT fid, NULL::VARCHAR AS ctx_session, NULL::VARCHAR AS ctx_model, NULL::VARCHAR AS ctx_turn FROM batch_files;
