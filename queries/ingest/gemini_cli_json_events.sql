-- Gemini CLI single-JSON chat file (the layout before the JSONL log, ~/.gemini/tmp/<projectHash>/chats/
-- session-*.json; also what /export-session writes) -> fmt_events + fmt_fates.   Input: stage_lines,
-- batch_files. One object {sessionId, projectHash, startTime, lastUpdated, messages: [...], kind, summary,
-- directories} in ANY key order (writers put `kind` before or after `messages`; pretty-printed or on one
-- line; sessionId may be missing), staged whole as line 1; each element of `messages` is a record numbered
-- 1.. (line = its 1-based position). Messages map exactly as in the JSONL layout (gemini_cli_events.sql):
-- user -> user message, gemini -> assistant message (toolCall results in meta.tool_results), info / error /
-- warning -> system; content is a string or a part list. Another type is a shape this reader does not know
-- -> skip unknown_shape:type <t>. A repeated id (not seen in real files) is merged, last wins.
CREATE OR REPLACE TEMP TABLE gm_el AS
SELECT fid, line, e, etype,
       CASE WHEN etype = 'OBJECT' THEN try(json_transform(e, '{
         "id":"VARCHAR","timestamp":"JSON","type":"VARCHAR","content":"JSON","displayContent":"JSON",
         "thoughts":"JSON","model":"VARCHAR","toolCalls":"JSON",
         "tokens":{"input":"BIGINT","output":"BIGINT","cached":"BIGINT","thoughts":"BIGINT","tool":"BIGINT","total":"BIGINT"}}')) END AS j
FROM doc_elements('$.messages');

CREATE OR REPLACE TEMP TABLE fmt_fates AS
SELECT * FROM doc_rejects('$.messages')
UNION ALL
SELECT fid, line,
       CASE WHEN etype <> 'OBJECT' OR j IS NULL OR j.type IS NULL OR j.id IS NULL THEN 'reject'
            WHEN j.type IN ('user', 'gemini', 'info', 'error', 'warning') THEN 'event' ELSE 'skip' END,
       CASE WHEN etype <> 'OBJECT' THEN 'not a JSON object'
            WHEN j IS NULL THEN 'malformed message'
            WHEN j.type IS NULL THEN 'missing field: type'
            WHEN j.id IS NULL THEN 'missing field: id'
            WHEN j.type IN ('user', 'gemini', 'info', 'error', 'warning') THEN 'type:' || j.type
            ELSE 'unknown_shape:type ' || j.type END,
       CASE WHEN etype <> 'OBJECT' OR j IS NULL OR j.type IS NULL OR j.id IS NULL THEN left(e::VARCHAR, 120) END
FROM gm_el;

CREATE OR REPLACE TEMP TABLE gm_rec AS
SELECT r.fid, min(r.line) AS line, max(r.line) AS last_line, 0 AS part, count(*)::INTEGER AS n_records, arg_max(r.j, r.line) AS j
FROM gm_el r JOIN fmt_fates t USING (fid, line)
WHERE t.fate = 'event'
GROUP BY r.fid, r.j.id;

CREATE OR REPLACE TEMP TABLE gm_ctx AS
SELECT f.fid, coalesce(d.txt ->> '$.sessionId', f.stem) AS session_id, d.txt ->> '$.kind' AS session_kind
FROM batch_files f LEFT JOIN stage_doc d ON d.fid = f.fid AND d.shape = 'OBJECT';

-- ---- from here on the same text as gemini_cli_events.sql (input: gm_rec, gm_ctx) ----
-- messages -> events: queries/ingest/gemini_messages.sql (shared with the JSONL layout)
