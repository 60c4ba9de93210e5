-- aider .aider.input.history (prompt-toolkit history: `# <local time>` then `+<typed line>` lines) ->
-- fmt_fates only.   Input: stage_lines, batch_files. The entries are what the human typed, and the same
-- prompts are already events of the sibling .aider.chat.history.md (`#### ` lines), whose parse
-- (aider_events.sql) reads this file to give them their per-input timestamps. To count nothing twice,
-- every line here is a knowingly skipped record (kinds aider_input:timestamp / aider_input:text / blank_line).
CREATE OR REPLACE TEMP TABLE fmt_fates AS
SELECT fid, line,
       CASE WHEN txt IS NULL THEN 'reject' ELSE 'skip' END AS fate,
       CASE WHEN txt IS NULL THEN 'invalid UTF-8'
            WHEN blank THEN 'blank_line'
            WHEN regexp_matches(txt, '^# \d{4}-\d\d-\d\d ') THEN 'aider_input:timestamp'
            WHEN starts_with(txt, '+') THEN 'aider_input:text'
            ELSE 'aider_input:other' END AS label,
       bad_excerpt AS excerpt
FROM stage_lines;

CREATE OR REPLACE TEMP TABLE fmt_events AS
SELECT NULL::INTEGER AS fid, NULL::INTEGER AS line, NULL::INTEGER AS last_line, 0 AS part, 0 AS n_records,
       NULL::VARCHAR AS session_id, NULL::TIMESTAMPTZ AS ts, NULL::TIMESTAMPTZ AS ts_end, 'none' AS ts_quality,
       NULL::VARCHAR AS role, NULL::VARCHAR AS kind, NULL::VARCHAR AS text,
       []::STRUCT(id VARCHAR, name VARCHAR, arguments VARCHAR)[] AS tool_calls, NULL::VARCHAR AS tool_call_id,
       NULL::VARCHAR AS finish_reason, NULL::VARCHAR AS initiator, NULL::VARCHAR AS message_id,
       NULL::VARCHAR AS record_id, NULL::VARCHAR AS parent_id, NULL::VARCHAR AS turn_id, NULL::VARCHAR AS model,
       false AS is_sidechain, NULL::BIGINT AS tokens_in, NULL::BIGINT AS tokens_out, NULL::JSON AS meta
WHERE false;

CREATE OR REPLACE TEMP TABLE fmt_ctx AS
SELECT fid, NULL::VARCHAR AS ctx_session, NULL::VARCHAR AS ctx_model, NULL::VARCHAR AS ctx_turn FROM batch_files;
