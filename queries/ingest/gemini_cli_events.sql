-- Gemini CLI chat JSONL (~/.gemini/tmp/<projectHash>/chats/session-*.jsonl, subagents under
-- chats/<parentSessionId>/<id>.jsonl) -> fmt_events + fmt_fates.   Input: stage_lines, batch_files.
-- Writer: google-gemini/gemini-cli packages/core/src/services/chatRecordingService.ts (appendRecord,
-- rewriteConversationFile, rewindTo, updateMessagesFromHistory) and chatRecordingTypes.ts. Record shapes:
--   {sessionId, projectHash, startTime, lastUpdated, kind, directories, summary}  header (line 1; a
--        resumed legacy .json is migrated with the same header)                      -> skip session_header
--   {id, timestamp, type, content, displayContent, thoughts, tokens, model, toolCalls}  a message; the
--        same id is RE-WRITTEN (first without, then with toolCalls / tokens): all lines of one id are one
--        event (line = first, last_line = last, n_records = k), the last write wins
--   {"$set": {lastUpdated | summary | directories | memoryScratchpad | sessionId ...}}  -> skip $set
--   {"$set": {messages: [...], lastUpdated}}  a checkpoint of the whole history (after /compress, masking,
--        a context snapshot): messages it holds that no bare record wrote (a compression summary turn, a
--        synthetic one) are events on the checkpoint's line (part = position in the list); a checkpoint
--        that only restates known messages -> skip $set:messages
--   {"$rewindTo": id}  the user rewound to before `id` (/rewind); the rewound messages did happen and stay
--        events                                                                        -> skip rewind
-- Message types: user -> user message; gemini -> assistant message (tool_calls from toolCalls; the calls'
-- results, status and own timestamps, recorded in the same record, are listed in meta.tool_results);
-- info / error / warning (UI notices: "Request cancelled.", API errors) -> system events. `content` is a
-- string or a part list ({text} ...), for every type. Any other type is a shape this reader does not know
-- -> skip unknown_shape:type <t> (counted as drift, see docs/formats.md). The file is re-read whole when
-- it changes (appendable = false).
CREATE OR REPLACE TEMP TABLE gm_raw AS
SELECT s.fid, s.line, s.txt, s.blank, s.bad_excerpt,
       CASE WHEN s.txt IS NOT NULL AND NOT s.blank THEN parse_line(s.txt, '{
         "id":"VARCHAR","timestamp":"JSON","type":"VARCHAR","content":"JSON","displayContent":"JSON",
         "thoughts":"JSON","model":"VARCHAR","toolCalls":"JSON",
         "tokens":{"input":"BIGINT","output":"BIGINT","cached":"BIGINT","thoughts":"BIGINT","tool":"BIGINT","total":"BIGINT"},
         "sessionId":"VARCHAR","projectHash":"VARCHAR","startTime":"VARCHAR","kind":"VARCHAR","$set":"JSON",
         "$rewindTo":"VARCHAR"}') END AS j
FROM stage_lines s;

-- checkpoint elements ({"$set": {"messages": [...]}}), numbered 1.. inside their line
CREATE OR REPLACE TEMP TABLE gm_ckpt AS
SELECT fid, line, x.i::INTEGER AS part,
       -- (the same record type as gm_raw.j, so both kinds of message rows share gm_rec)
       try(json_transform(x.e, '{
         "id":"VARCHAR","timestamp":"JSON","type":"VARCHAR","content":"JSON","displayContent":"JSON",
         "thoughts":"JSON","model":"VARCHAR","toolCalls":"JSON",
         "tokens":{"input":"BIGINT","output":"BIGINT","cached":"BIGINT","thoughts":"BIGINT","tool":"BIGINT","total":"BIGINT"},
         "sessionId":"VARCHAR","projectHash":"VARCHAR","startTime":"VARCHAR","kind":"VARCHAR","$set":"JSON",
         "$rewindTo":"VARCHAR"}')) AS j
FROM (SELECT fid, line, unnest(list_transform(json_extract(j."$set", '$.messages[*]'), lambda e, i: {'i': i, 'e': e})) AS x
      FROM gm_raw WHERE j IS NOT NULL AND json_type(j."$set", '$.messages') = 'ARRAY');

-- checkpointed messages no bare record wrote, of a known type: first checkpoint that holds each, last write wins
CREATE OR REPLACE TEMP TABLE gm_ckpt_new AS
SELECT c.fid, min(c.line) AS line, arg_min(c.part, c.line) AS part, arg_max(c.j, c.line) AS j
FROM gm_ckpt c
WHERE c.j.id IS NOT NULL AND c.j.type IN ('user', 'gemini', 'info', 'error', 'warning')
  AND NOT EXISTS (SELECT 1 FROM gm_raw r WHERE r.fid = c.fid AND r.j.id = c.j.id AND r.j.type IS NOT NULL)
GROUP BY c.fid, c.j.id;

CREATE OR REPLACE TEMP TABLE fmt_fates AS
SELECT fid, line,
       CASE WHEN txt IS NULL OR (NOT blank AND j IS NULL) THEN 'reject'
            WHEN blank THEN 'skip'
            WHEN json_type(txt) <> 'OBJECT' THEN 'reject'
            WHEN j.id IS NOT NULL AND j.type IN ('user', 'gemini', 'info', 'error', 'warning') THEN 'event'
            WHEN j.id IS NOT NULL AND j.type IS NOT NULL THEN 'skip'
            WHEN (fid, line) IN (SELECT (fid, line) FROM gm_ckpt_new) THEN 'event'
            WHEN j.sessionId IS NOT NULL OR j."$set" IS NOT NULL OR j."$rewindTo" IS NOT NULL THEN 'skip'
            ELSE 'reject' END AS fate,
       CASE WHEN txt IS NULL THEN 'invalid UTF-8'
            WHEN blank THEN 'blank_line'
            WHEN j IS NULL THEN 'invalid JSON'
            WHEN json_type(txt) <> 'OBJECT' THEN 'not a JSON object'
            WHEN j.id IS NOT NULL AND j.type IN ('user', 'gemini', 'info', 'error', 'warning') THEN 'type:' || j.type
            WHEN j.id IS NOT NULL AND j.type IS NOT NULL THEN 'unknown_shape:type ' || j.type
            WHEN json_type(j."$set", '$.messages') = 'ARRAY' THEN '$set:messages'
            WHEN j.sessionId IS NOT NULL THEN 'session_header'
            WHEN j."$set" IS NOT NULL THEN '$set'
            WHEN j."$rewindTo" IS NOT NULL THEN 'rewind'
            WHEN j.id IS NULL THEN 'missing field: id'
            ELSE 'missing field: type' END AS label,
       CASE WHEN txt IS NULL THEN bad_excerpt ELSE left(txt, 120) END AS excerpt
FROM gm_raw;

-- message records, one row per id (last write wins), with the lines it spans; then the checkpoint-only ones
CREATE OR REPLACE TEMP TABLE gm_rec AS
SELECT r.fid, min(r.line) AS line, max(r.line) AS last_line, 0 AS part, count(*)::INTEGER AS n_records,
       arg_max(r.j, r.line) AS j
FROM gm_raw r JOIN fmt_fates t USING (fid, line)
WHERE t.fate = 'event' AND r.j.id IS NOT NULL AND r.j.type IS NOT NULL
GROUP BY r.fid, r.j.id
UNION ALL
SELECT fid, line, line, part, 1, j FROM gm_ckpt_new;

CREATE OR REPLACE TEMP TABLE gm_ctx AS
SELECT f.fid, coalesce(h.sid, f.ctx_session, f.stem) AS session_id, h.kind AS session_kind
FROM batch_files f
LEFT JOIN (SELECT fid, arg_min(j.sessionId, line) AS sid, arg_min(j.kind, line) AS kind
           FROM gm_raw WHERE j.sessionId IS NOT NULL GROUP BY fid) h USING (fid);
-- messages -> events: queries/ingest/gemini_messages.sql (shared with the single-JSON layout)
