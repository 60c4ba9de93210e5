-- GitHub Copilot CLI session events (~/.copilot/session-state/<id>/events.jsonl) -> fmt_events + fmt_fates.
-- Input: stage_lines, batch_files. Each line {type, data, id, timestamp, parentId}. Mapping:
--   user.message          -> user message; text = data.content, or (content empty: the autopilot nudge)
--                            data.transformedContent without its <current_datetime> prefix; meta keeps
--                            content_empty / has_transformed / agentMode; turn_id = interactionId
--   assistant.message     -> assistant message, tool_calls from toolRequests, tokens_out = outputTokens
--   tool.execution_complete -> tool tool_result (tool_call_id = toolCallId, text = result.content)
--   assistant.turn_start / turn_end -> system turn_start / turn_end; session.task_complete -> system turn_end
--   system.message        -> system context (the system prompt, re-sent before each user.message)
--   abort                 -> system turn_aborted (text = data.reason): the person stopped the running turn
--   session.* other, tool.execution_start, hooks ... -> skipped by type
-- session_id = session.start data.sessionId (carried to later ingests of the grown file), model =
-- the last session.model_change / tool.execution_complete model in force.
CREATE OR REPLACE TEMP TABLE cp AS
SELECT s.fid, s.line, s.txt, s.blank, s.bad_excerpt,
       CASE WHEN s.txt IS NOT NULL AND NOT s.blank THEN parse_line(s.txt, '{
         "type":"VARCHAR","id":"VARCHAR","parentId":"VARCHAR","timestamp":"JSON",
         "data":{"sessionId":"VARCHAR","content":"JSON","transformedContent":"VARCHAR","agentMode":"VARCHAR",
                 "interactionId":"VARCHAR","turnId":"VARCHAR","messageId":"VARCHAR","toolRequests":"JSON",
                 "outputTokens":"BIGINT","requestId":"VARCHAR","reasoningText":"VARCHAR","toolCallId":"VARCHAR",
                 "success":"BOOLEAN","result":"JSON","model":"VARCHAR","newModel":"VARCHAR","role":"VARCHAR",
                 "summary":"VARCHAR","newMode":"VARCHAR","attachments":"JSON","error":"JSON",
                 "reason":"VARCHAR"}}') END AS j
FROM stage_lines s;

CREATE OR REPLACE TEMP TABLE cp_ctx AS
SELECT c.*, parse_ts(c.j.timestamp) AS ts,
       coalesce(first_value(CASE WHEN c.j.type = 'session.start' THEN c.j.data.sessionId END IGNORE NULLS)
                  OVER (PARTITION BY c.fid ORDER BY c.line ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING),
                f.ctx_session, f.stem) AS session_id,
       coalesce(last_value(CASE WHEN c.j.type = 'session.model_change' THEN c.j.data.newModel
                                WHEN c.j.type = 'tool.execution_complete' THEN c.j.data.model END IGNORE NULLS)
                  OVER (PARTITION BY c.fid ORDER BY c.line ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW),
                f.ctx_model) AS model,
       coalesce(last_value(c.j.data.interactionId IGNORE NULLS)
                  OVER (PARTITION BY c.fid ORDER BY c.line ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW),
                f.ctx_turn) AS interaction
FROM cp c JOIN batch_files f USING (fid);

CREATE OR REPLACE TEMP TABLE fmt_fates AS
SELECT fid, line,
       CASE WHEN txt IS NULL OR (NOT blank AND (j IS NULL OR j.type IS NULL)) THEN 'reject'
            WHEN blank THEN 'skip'
            WHEN j.type IN ('user.message', 'assistant.message', 'tool.execution_complete', 'assistant.turn_start',
                            'assistant.turn_end', 'session.task_complete', 'system.message', 'abort') THEN 'event'
            ELSE 'skip' END AS fate,
       CASE WHEN txt IS NULL THEN 'invalid UTF-8'
            WHEN blank THEN 'blank_line'
            WHEN j IS NULL THEN 'invalid JSON'
            WHEN json_type(txt) <> 'OBJECT' THEN 'not a JSON object'
            WHEN j.type IS NULL THEN 'missing field: type'
            ELSE j.type END AS label,
       CASE WHEN txt IS NULL THEN bad_excerpt ELSE left(txt, 120) END AS excerpt
FROM cp_ctx;

CREATE OR REPLACE TEMP TABLE fmt_events AS
SELECT c.fid, c.line, c.line AS last_line, 0 AS part, 1 AS n_records, c.session_id, c.ts, c.ts AS ts_end,
       CASE WHEN c.ts IS NULL THEN 'none' ELSE 'per_message' END AS ts_quality,
       CASE c.j.type WHEN 'user.message' THEN 'user' WHEN 'assistant.message' THEN 'assistant'
                     WHEN 'tool.execution_complete' THEN 'tool' ELSE 'system' END AS role,
       CASE c.j.type WHEN 'user.message' THEN 'message' WHEN 'assistant.message' THEN 'message'
                     WHEN 'tool.execution_complete' THEN 'tool_result' WHEN 'assistant.turn_start' THEN 'turn_start'
                     WHEN 'system.message' THEN 'context' WHEN 'abort' THEN 'turn_aborted' ELSE 'turn_end' END AS kind,
       CASE c.j.type
            WHEN 'user.message' THEN coalesce(nullif(json_text(c.j.data.content), ''),
                 nullif(regexp_replace(c.j.data.transformedContent, '^\s*<current_datetime>[^<]*</current_datetime>\s*', ''), ''))
            WHEN 'assistant.message' THEN nullif(json_text(c.j.data.content), '')
            WHEN 'tool.execution_complete' THEN coalesce(c.j.data.result ->> '$.content', json_text(c.j.data.result),
                                                         c.j.data.error ->> '$.message', json_text(c.j.data.error))
            WHEN 'system.message' THEN json_text(c.j.data.content)
            WHEN 'session.task_complete' THEN c.j.data.summary
            WHEN 'abort' THEN c.j.data.reason END AS text,
       CASE WHEN c.j.type = 'assistant.message' AND json_type(c.j.data.toolRequests) = 'ARRAY' THEN
              list_transform(try(json_transform(c.j.data.toolRequests, '[{"toolCallId":"VARCHAR","name":"VARCHAR","arguments":"JSON"}]')),
                lambda r: {'id': r.toolCallId, 'name': r.name,
                           'arguments': CASE WHEN json_type(r.arguments) = 'VARCHAR' THEN r.arguments ->> '$' ELSE r.arguments::VARCHAR END})
            ELSE [] END::STRUCT(id VARCHAR, name VARCHAR, arguments VARCHAR)[] AS tool_calls,
       CASE WHEN c.j.type = 'tool.execution_complete' THEN c.j.data.toolCallId END AS tool_call_id,
       NULL::VARCHAR AS finish_reason, NULL::VARCHAR AS initiator,
       CASE WHEN c.j.type = 'assistant.message' THEN c.j.data.messageId END AS message_id,
       c.j.id AS record_id, c.j.parentId AS parent_id,
       coalesce(c.j.data.interactionId, c.interaction) AS turn_id,
       CASE WHEN c.j.type = 'assistant.message' THEN c.model END AS model, false AS is_sidechain,
       NULL::BIGINT AS tokens_in,
       CASE WHEN c.j.type = 'assistant.message' THEN c.j.data.outputTokens END AS tokens_out,
       json_object('copilot_type', c.j.type, 'turnId', c.j.data.turnId,
                   'content_empty', CASE WHEN c.j.type = 'user.message' THEN coalesce(json_text(c.j.data.content), '') = '' END,
                   'has_transformed', CASE WHEN c.j.type = 'user.message' THEN c.j.data.transformedContent IS NOT NULL END,
                   'text_from', CASE WHEN c.j.type = 'user.message' THEN
                        CASE WHEN coalesce(json_text(c.j.data.content), '') <> '' THEN 'content'
                             WHEN c.j.data.transformedContent IS NOT NULL THEN 'transformedContent' END END,
                   'agentMode', c.j.data.agentMode, 'requestId', c.j.data.requestId,
                   'has_reasoning', coalesce(c.j.data.reasoningText, '') <> '',
                   'success', c.j.data.success,
                   'n_attachments', CASE WHEN json_type(c.j.data.attachments) = 'ARRAY' THEN json_array_length(c.j.data.attachments) END) AS meta
FROM cp_ctx c JOIN fmt_fates t USING (fid, line)
WHERE t.fate = 'event';

-- what a later ingest of the grown file needs: the session id, the model and interaction in force
CREATE OR REPLACE TEMP TABLE fmt_ctx AS
SELECT fid, any_value(session_id) AS ctx_session, arg_max(model, line) AS ctx_model,
       arg_max(interaction, line) AS ctx_turn
FROM cp_ctx GROUP BY fid;
