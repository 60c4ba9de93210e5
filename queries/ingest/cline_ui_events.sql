-- Cline / Roo Code ui_messages.json -> fmt_events + fmt_fates.   Input: stage_lines, batch_files.
-- One JSON array of UI rows {ts, type: say|ask, say|ask: <kind>, text, partial, ...}, staged whole as
-- line 1; line = the row's 1-based position. The conversation of record is api_conversation_history.json
-- of the same task folder (same session_id = folder name), so UI rows never become user/assistant
-- events (that would count every turn twice). Kept, as role 'system' kind 'system' events with
-- meta.ui_kind, are the rows that say something about who acted and about stalls: the task text (the
-- first row), human feedback, approval asks and follow-up questions, completion, resume prompts, API
-- request start/retry/failure, errors and mistake limits. Streaming snapshots (partial = true) and UI
-- mirrors of model output (say text/reasoning/tool/command output, checkpoints) are skipped by kind.
CREATE OR REPLACE TEMP TABLE cu_j AS
SELECT fid, line, e, etype,
       CASE WHEN etype = 'OBJECT' THEN try(json_transform(e, '{"ts":"JSON","type":"VARCHAR","say":"VARCHAR","ask":"VARCHAR",
         "text":"VARCHAR","partial":"BOOLEAN","conversationHistoryIndex":"BIGINT","lastCheckpointHash":"VARCHAR",
         "modelInfo":{"modelId":"VARCHAR","providerId":"VARCHAR","mode":"VARCHAR"}}')) END AS j
FROM doc_elements('$');

CREATE OR REPLACE TEMP TABLE cu_cls AS
SELECT *, j.type || ':' || coalesce(CASE j.type WHEN 'say' THEN j.say WHEN 'ask' THEN j.ask END, '?') AS ui_kind,
       line = min(line) OVER (PARTITION BY fid) AS first_row
FROM cu_j;

CREATE OR REPLACE TEMP TABLE fmt_fates AS
SELECT * FROM doc_rejects('$')
UNION ALL
SELECT fid, line,
       CASE WHEN etype <> 'OBJECT' OR j IS NULL OR j.type IS NULL THEN 'reject'
            WHEN j.type NOT IN ('say', 'ask') THEN 'skip'
            WHEN coalesce(j.partial, false) THEN 'skip'
            WHEN (first_row AND ui_kind IN ('say:text', 'say:task'))
              OR ui_kind IN ('say:task', 'say:user_feedback', 'say:user_feedback_diff', 'say:api_req_started',
                             'say:api_req_retried', 'say:error_retry', 'say:error', 'say:completion_result',
                             'say:diff_error', 'say:clineignore_error', 'say:mistake_limit_reached',
                             'ask:followup', 'ask:plan_mode_respond', 'ask:completion_result', 'ask:resume_task',
                             'ask:resume_completed_task', 'ask:api_req_failed', 'ask:mistake_limit_reached',
                             'ask:auto_approval_max_req_reached', 'ask:command', 'ask:tool', 'ask:new_task',
                             'ask:condense') THEN 'event'
            ELSE 'skip' END,
       CASE WHEN etype <> 'OBJECT' THEN 'not a JSON object'
            WHEN j IS NULL THEN 'malformed row'
            WHEN j.type IS NULL THEN 'missing field: type'
            WHEN coalesce(j.partial, false) THEN 'partial'
            ELSE 'ui:' || ui_kind END,
       CASE WHEN etype <> 'OBJECT' OR j IS NULL OR j.type IS NULL THEN left(e::VARCHAR, 120) END
FROM cu_cls;

CREATE OR REPLACE TEMP TABLE fmt_events AS
SELECT c.fid, c.line, c.line AS last_line, 0 AS part, 1 AS n_records,
       coalesce(nullif(regexp_extract(f.file, '([^/\\]+)[/\\][^/\\]+$', 1), ''), f.stem) AS session_id,
       parse_ts(c.j.ts) AS ts, parse_ts(c.j.ts) AS ts_end,
       CASE WHEN parse_ts(c.j.ts) IS NULL THEN 'none' ELSE 'per_message' END AS ts_quality,
       'system' AS role, 'system' AS kind,
       CASE WHEN c.ui_kind LIKE '%api_req_%' AND json_valid(c.j.text) THEN NULL ELSE c.j.text END AS text,
       []::STRUCT(id VARCHAR, name VARCHAR, arguments VARCHAR)[] AS tool_calls, NULL::VARCHAR AS tool_call_id,
       NULL::VARCHAR AS finish_reason, NULL::VARCHAR AS initiator, NULL::VARCHAR AS message_id,
       NULL::VARCHAR AS record_id, NULL::VARCHAR AS parent_id, NULL::VARCHAR AS turn_id,
       c.j.modelInfo.modelId AS model, false AS is_sidechain,
       -- token counts stay in meta.api_req: the api history's assistant events already carry them
       NULL::BIGINT AS tokens_in, NULL::BIGINT AS tokens_out,
       json_object('cline_file', 'ui', 'ui_kind', c.ui_kind,
                   'task', c.first_row AND c.ui_kind IN ('say:text', 'say:task') OR c.ui_kind = 'say:task',
                   'human_feedback', c.ui_kind IN ('say:user_feedback', 'say:user_feedback_diff'),
                   'conversationHistoryIndex', c.j.conversationHistoryIndex, 'mode', c.j.modelInfo.mode,
                   'api_req', CASE WHEN c.ui_kind LIKE '%api_req_%' AND json_valid(c.j.text) THEN c.j.text::JSON END,
                   'cancel_reason', CASE WHEN c.ui_kind LIKE '%api_req_%' AND json_valid(c.j.text) THEN c.j.text ->> '$.cancelReason' END) AS meta
FROM cu_cls c JOIN fmt_fates t USING (fid, line) JOIN batch_files f USING (fid)
WHERE t.fate = 'event';

CREATE OR REPLACE TEMP TABLE fmt_ctx AS
SELECT fid, NULL::VARCHAR AS ctx_session, NULL::VARCHAR AS ctx_model, NULL::VARCHAR AS ctx_turn FROM batch_files;
