-- Cline / Roo Code ui_messages.json -> fmt_events + fmt_fates.   Input: stage_lines, batch_files.
-- One JSON array of UI rows {ts, type: say|ask, say|ask: <kind>, text, partial, ...}, staged whole as
-- line 1; line = the row's 1-based position. session_id = the task folder name.
--
-- Two readings, chosen per file by batch_files.companion (the task folder also holds
-- api_conversation_history.json):
--
-- * With the API file (companion): that file is the conversation of record, so UI rows never become
--   user/assistant events (that would count every turn twice). Kept, as role 'system' kind 'system'
--   events with meta.ui_kind, are the rows that say something about who acted, about stalls and about
--   request timing: the task text (the first row), human feedback, approval asks and follow-up
--   questions, completion, resume prompts, API request start/finish/retry/failure (meta.api_req),
--   errors and mistake limits. Streaming snapshots (partial = true) and UI mirrors of model output (say
--   text/reasoning/tool/command output, checkpoints) are skipped by kind.
--
-- * UI file alone (common in shared exports): the UI stream is read as the conversation.
--   Human input: the task (first say:text, or say:task), say:user_feedback, say:user_feedback_diff ->
--   user messages. Automatic: ask:resume_task / ask:resume_completed_task (meta.ui_resume; the harness
--   asks to resume, a person clicks) and the automatic retries say:api_req_retried / say:error_retry
--   (meta.ui_retry) -> user messages the prompt library labels. Every say:api_req_started opens a model
--   request: its request text (the API user message, in the row's JSON) decides what it is: a tool
--   result ("[tool for 'x'] Result:") -> a tool_result event; Cline's no-tool nudge ("[ERROR] You did
--   not use a tool ...") -> an automatic user message; anything else (the task, feedback, resumption:
--   the human rows above already carry it) -> a system event holding the timing. The replies of one
--   request -- say:text, say:completion_result, ask:followup / ask:plan_mode_respond (their question),
--   and the tool calls ask|say:tool, ask|say:command, ask:use_mcp_server (one call each, id 'ui-<line>')
--   -- merge into one assistant event (n_records = rows merged). The harness's <environment_details>
--   block is cut from request texts. Other kept kinds are system events as above.
CREATE OR REPLACE TEMP TABLE cu_j AS
SELECT d.fid, d.line, d.e, d.etype, NOT coalesce(f.companion, false) AS conv,
       CASE WHEN d.etype = 'OBJECT' THEN try(json_transform(d.e, '{"ts":"JSON","type":"VARCHAR","say":"VARCHAR","ask":"VARCHAR",
         "text":"VARCHAR","partial":"BOOLEAN","conversationHistoryIndex":"BIGINT","lastCheckpointHash":"VARCHAR",
         "modelInfo":{"modelId":"VARCHAR","providerId":"VARCHAR","mode":"VARCHAR"}}')) END AS j
FROM doc_elements('$') d JOIN batch_files f USING (fid);

CREATE OR REPLACE TEMP TABLE cu_cls AS
SELECT *,
       CASE WHEN ui_kind LIKE '%api_req_%' AND json_valid(j.text) THEN j.text END AS api_json,
       CASE WHEN ui_kind = 'say:api_req_started' AND json_valid(j.text)
            THEN regexp_replace(coalesce(j.text ->> '$.request', ''), '(?s)\s*<environment_details>.*$', '') END AS request
FROM (SELECT *, j.type || ':' || coalesce(CASE j.type WHEN 'say' THEN j.say WHEN 'ask' THEN j.ask END, '?') AS ui_kind,
             line = min(line) OVER (PARTITION BY fid) AS first_row
      FROM cu_j);

-- what each readable, non-partial row is in the UI-only reading (NULL: as in the companion reading)
CREATE OR REPLACE TEMP TABLE cu_conv AS
SELECT *,
       CASE WHEN NOT conv OR etype <> 'OBJECT' OR j IS NULL OR j.type IS NULL OR coalesce(j.partial, false) THEN NULL
            WHEN (first_row AND ui_kind IN ('say:text', 'say:task'))
              OR ui_kind IN ('say:task', 'say:user_feedback', 'say:user_feedback_diff') THEN 'human'
            WHEN ui_kind IN ('ask:resume_task', 'ask:resume_completed_task', 'say:api_req_retried', 'say:error_retry') THEN 'auto'
            WHEN ui_kind = 'say:api_req_started' THEN
                 CASE WHEN starts_with(ltrim(coalesce(request, '')), '[ERROR] You did not use a tool') THEN 'auto_request'
                      WHEN regexp_matches(coalesce(request, ''), '^\[[^\n]*\] Result:')
                       AND NOT regexp_matches(request, '<(feedback|answer|user_message)>') THEN 'tool_request'
                      ELSE 'request' END
            WHEN ui_kind IN ('say:text', 'say:completion_result', 'ask:followup', 'ask:plan_mode_respond') THEN 'reply'
            WHEN ui_kind IN ('ask:tool', 'say:tool', 'ask:command', 'say:command', 'ask:use_mcp_server') THEN 'call'
            END AS conv_role
FROM cu_cls;

CREATE OR REPLACE TEMP TABLE fmt_fates AS
SELECT * FROM doc_rejects('$')
UNION ALL
SELECT fid, line,
       CASE WHEN etype <> 'OBJECT' OR j IS NULL OR j.type IS NULL THEN 'reject'
            WHEN j.type NOT IN ('say', 'ask') THEN 'skip'
            WHEN coalesce(j.partial, false) THEN 'skip'
            WHEN conv_role IS NOT NULL THEN 'event'
            WHEN (first_row AND ui_kind IN ('say:text', 'say:task'))
              OR ui_kind IN ('say:task', 'say:user_feedback', 'say:user_feedback_diff', 'say:api_req_started',
                             'say:api_req_finished', 'say:api_req_retried', 'say:error_retry', 'say:error',
                             'say:completion_result', 'say:diff_error', 'say:clineignore_error',
                             'say:mistake_limit_reached', 'ask:followup', 'ask:plan_mode_respond',
                             'ask:completion_result', 'ask:resume_task', 'ask:resume_completed_task',
                             'ask:api_req_failed', 'ask:mistake_limit_reached', 'ask:auto_approval_max_req_reached',
                             'ask:command', 'ask:tool', 'ask:new_task', 'ask:condense') THEN 'event'
            ELSE 'skip' END AS fate,
       CASE WHEN etype <> 'OBJECT' THEN 'not a JSON object'
            WHEN j IS NULL THEN 'malformed row'
            WHEN j.type IS NULL THEN 'missing field: type'
            WHEN coalesce(j.partial, false) THEN 'partial'
            ELSE 'ui:' || ui_kind END AS label,
       CASE WHEN etype <> 'OBJECT' OR j IS NULL OR j.type IS NULL THEN left(e::VARCHAR, 120) END AS excerpt
FROM cu_conv;

-- the kept rows, with the request they belong to (rows up to the next request-opening row) and, for
-- replies and calls, the text / call they contribute
CREATE OR REPLACE TEMP TABLE cu_rows AS
SELECT c.*, f.file, f.stem, parse_ts(c.j.ts) AS ts,
       sum(CASE WHEN c.conv_role IN ('human', 'auto', 'auto_request', 'tool_request', 'request') THEN 1 ELSE 0 END)
         OVER (PARTITION BY c.fid ORDER BY c.line ROWS UNBOUNDED PRECEDING) AS grp,
       CASE WHEN c.conv_role = 'reply' THEN CASE
                 WHEN c.ui_kind IN ('ask:followup', 'ask:plan_mode_respond') AND json_valid(c.j.text)
                   THEN coalesce(c.j.text ->> '$.question', c.j.text ->> '$.response', c.j.text)
                 ELSE c.j.text END END AS reply_text,
       CASE WHEN c.conv_role = 'call' THEN {'id': 'ui-' || c.line,
                 'name': CASE WHEN c.ui_kind LIKE '%command' THEN 'execute_command'
                              WHEN c.ui_kind = 'ask:use_mcp_server' THEN 'use_mcp_server'
                              WHEN json_valid(c.j.text) THEN coalesce(c.j.text ->> '$.tool', 'tool') ELSE 'tool' END,
                 'arguments': c.j.text} END AS call,
       lead(c.conv_role) OVER (PARTITION BY c.fid ORDER BY c.line) AS next_role
FROM cu_conv c JOIN fmt_fates t USING (fid, line) JOIN batch_files f USING (fid)
WHERE t.fate = 'event';

CREATE OR REPLACE TEMP TABLE fmt_events AS
-- rows that are not part of the UI-only conversation: system events (the companion reading)
SELECT fid, line, line AS last_line, 0 AS part, 1 AS n_records,
       coalesce(nullif(regexp_extract(file, '([^/\\]+)[/\\][^/\\]+$', 1), ''), stem) AS session_id,
       ts, ts AS ts_end, CASE WHEN ts IS NULL THEN 'none' ELSE 'per_message' END AS ts_quality,
       CASE WHEN conv_role IN ('human', 'auto', 'auto_request') THEN 'user'
            WHEN conv_role = 'tool_request' THEN 'user' ELSE 'system' END AS role,
       CASE WHEN conv_role IN ('human', 'auto', 'auto_request') THEN 'message'
            WHEN conv_role = 'tool_request' THEN 'tool_result' ELSE 'system' END AS kind,
       CASE WHEN conv_role IN ('auto_request', 'tool_request') THEN request
            WHEN api_json IS NOT NULL THEN NULL ELSE j.text END AS text,
       []::STRUCT(id VARCHAR, name VARCHAR, arguments VARCHAR)[] AS tool_calls,
       CASE WHEN conv_role = 'tool_request' THEN prev_call_id END AS tool_call_id,
       NULL::VARCHAR AS finish_reason, NULL::VARCHAR AS initiator, NULL::VARCHAR AS message_id,
       NULL::VARCHAR AS record_id, NULL::VARCHAR AS parent_id, NULL::VARCHAR AS turn_id,
       j.modelInfo.modelId AS model, false AS is_sidechain,
       -- token counts stay in meta.api_req: the api history's assistant events already carry them
       NULL::BIGINT AS tokens_in, NULL::BIGINT AS tokens_out,
       CASE WHEN conv_role IS NULL THEN
            json_object('cline_file', 'ui', 'ui_kind', ui_kind,
                        'task', first_row AND ui_kind IN ('say:text', 'say:task') OR ui_kind = 'say:task',
                        'human_feedback', ui_kind IN ('say:user_feedback', 'say:user_feedback_diff'),
                        'conversationHistoryIndex', j.conversationHistoryIndex, 'mode', j.modelInfo.mode,
                        'api_req', api_json::JSON,
                        'cancel_reason', api_json ->> '$.cancelReason')
       ELSE json_object('cline_file', 'ui', 'ui_kind', ui_kind, 'ui_conversation', true,
                        'task', first_row AND ui_kind IN ('say:text', 'say:task') OR ui_kind = 'say:task',
                        'human_feedback', ui_kind IN ('say:user_feedback', 'say:user_feedback_diff'),
                        'ui_resume', ui_kind IN ('ask:resume_task', 'ask:resume_completed_task'),
                        -- a resume the person answered with new instructions: those start the request
                        'ui_resume_then_feedback', ui_kind IN ('ask:resume_task', 'ask:resume_completed_task')
                            AND next_role = 'human',
                        'ui_retry', ui_kind IN ('say:api_req_retried', 'say:error_retry'),
                        'no_tool_error', conv_role = 'auto_request',
                        'result_of', CASE WHEN conv_role = 'tool_request'
                                          THEN regexp_extract(request, '^\[([A-Za-z0-9_:.-]+)', 1) END,
                        'conversationHistoryIndex', j.conversationHistoryIndex, 'mode', j.modelInfo.mode,
                        'api_req', api_json::JSON,
                        'cancel_reason', api_json ->> '$.cancelReason') END AS meta
FROM (SELECT *, last_value(call.id IGNORE NULLS) OVER (PARTITION BY fid ORDER BY line
                  ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS prev_call_id FROM cu_rows)
WHERE coalesce(conv_role, '') NOT IN ('reply', 'call')
UNION ALL
-- UI-only reading: the replies and tool calls of one request as one assistant event
SELECT fid, min(line), max(line), 0, count(*)::INTEGER,
       coalesce(nullif(regexp_extract(any_value(file), '([^/\\]+)[/\\][^/\\]+$', 1), ''), any_value(stem)),
       arg_min(ts, line), arg_max(ts, line),
       CASE WHEN bool_and(ts IS NOT NULL) THEN 'per_message' ELSE 'none' END,
       'assistant', 'message',
       nullif(string_agg(reply_text, chr(10) ORDER BY line) FILTER (WHERE coalesce(reply_text, '') <> ''), ''),
       coalesce(list(call ORDER BY line) FILTER (WHERE call IS NOT NULL), []),
       NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       arg_max(j.modelInfo.modelId, line) FILTER (WHERE j.modelInfo.modelId IS NOT NULL), false, NULL, NULL,
       json_object('cline_file', 'ui', 'ui_conversation', true, 'ui_kinds', list(ui_kind ORDER BY line),
                   'mode', arg_max(j.modelInfo.mode, line), 'providerId', arg_max(j.modelInfo.providerId, line),
                   'conversationHistoryIndex', max(j.conversationHistoryIndex))
FROM cu_rows WHERE conv_role IN ('reply', 'call')
GROUP BY fid, grp;

CREATE OR REPLACE TEMP TABLE fmt_ctx AS
SELECT fid, NULL::VARCHAR AS ctx_session, NULL::VARCHAR AS ctx_model, NULL::VARCHAR AS ctx_turn FROM batch_files;
