-- Gemini CLI chat JSONL (~/.gemini/tmp/<projectHash>/chats/*.jsonl) -> fmt_events + fmt_fates.
-- Input: stage_lines, batch_files. Line 1 is a header {sessionId, projectHash, startTime, lastUpdated,
-- kind}; `{"$set": {...}}` lines patch it; message records {id, timestamp, type: user|gemini|info, content,
-- thoughts, tokens, model, toolCalls} are RE-WRITTEN with the same id (first without, then with
-- toolCalls): all lines of one id are one event (line = first, last_line = last, n_records = k), the
-- last write wins. A gemini message is an assistant event (tool_calls from toolCalls; the calls' results,
-- status and own timestamps, recorded in the same record, are listed in meta.tool_results). `info` (and
-- any other type) records are system events. The file is re-read whole when it changes (appendable = false).
CREATE OR REPLACE TEMP TABLE gm_raw AS
SELECT s.fid, s.line, s.txt, s.blank, s.bad_excerpt,
       CASE WHEN s.txt IS NOT NULL AND NOT s.blank THEN parse_line(s.txt, '{
         "id":"VARCHAR","timestamp":"JSON","type":"VARCHAR","content":"JSON","displayContent":"JSON",
         "thoughts":"JSON","model":"VARCHAR","toolCalls":"JSON",
         "tokens":{"input":"BIGINT","output":"BIGINT","cached":"BIGINT","thoughts":"BIGINT","tool":"BIGINT","total":"BIGINT"},
         "sessionId":"VARCHAR","projectHash":"VARCHAR","startTime":"VARCHAR","kind":"VARCHAR","$set":"JSON"}') END AS j
FROM stage_lines s;

CREATE OR REPLACE TEMP TABLE fmt_fates AS
SELECT fid, line,
       CASE WHEN txt IS NULL OR (NOT blank AND j IS NULL) THEN 'reject'
            WHEN blank THEN 'skip'
            WHEN json_type(txt) <> 'OBJECT' THEN 'reject'
            WHEN j.id IS NOT NULL AND j.type IS NOT NULL THEN 'event'
            WHEN j.sessionId IS NOT NULL OR j."$set" IS NOT NULL THEN 'skip'
            ELSE 'reject' END AS fate,
       CASE WHEN txt IS NULL THEN 'invalid UTF-8'
            WHEN blank THEN 'blank_line'
            WHEN j IS NULL THEN 'invalid JSON'
            WHEN json_type(txt) <> 'OBJECT' THEN 'not a JSON object'
            WHEN j.id IS NOT NULL AND j.type IS NOT NULL THEN 'type:' || j.type
            WHEN j.sessionId IS NOT NULL THEN 'session_header'
            WHEN j."$set" IS NOT NULL THEN '$set'
            WHEN j.id IS NULL THEN 'missing field: id'
            ELSE 'missing field: type' END AS label,
       CASE WHEN txt IS NULL THEN bad_excerpt ELSE left(txt, 120) END AS excerpt
FROM gm_raw;

-- message records, one row per id (last write wins), with the lines it spans
CREATE OR REPLACE TEMP TABLE gm_rec AS
SELECT r.fid, min(r.line) AS line, max(r.line) AS last_line, count(*)::INTEGER AS n_records,
       arg_max(r.j, r.line) AS j
FROM gm_raw r JOIN fmt_fates t USING (fid, line)
WHERE t.fate = 'event'
GROUP BY r.fid, r.j.id;

CREATE OR REPLACE TEMP TABLE gm_ctx AS
SELECT f.fid, coalesce(h.sid, f.ctx_session, f.stem) AS session_id, h.kind AS session_kind
FROM batch_files f
LEFT JOIN (SELECT fid, arg_min(j.sessionId, line) AS sid, arg_min(j.kind, line) AS kind
           FROM gm_raw WHERE j.sessionId IS NOT NULL GROUP BY fid) h USING (fid);
-- messages -> events: queries/ingest/gemini_messages.sql (shared with the single-JSON layout)
