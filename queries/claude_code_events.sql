-- Claude Code session JSONL -> fmt_events + fmt_fates + fmt_ctx.   Input: stage_lines, batch_files.
-- One API reply written over several lines (one per content block, same message.id) becomes one
-- assistant event; tool results stay user-role events of kind tool_result; queue-operation enqueue
-- text (typed while the agent worked) is a user event of kind queued_input; system lines are system
-- events. All per-line work happens in the first statement, one parallel pass over the raw lines.
CREATE OR REPLACE TEMP TABLE cc AS
SELECT fid, line, blank, bad_excerpt, j, excerpt, shape, typ, session_id, ts, blocks, content_str,
       CASE WHEN typ IN ('user', 'assistant') THEN
            CASE WHEN content_str IS NOT NULL THEN content_str
                 ELSE nullif(array_to_string(list_filter(list_transform(blocks, lambda b: CASE
                        WHEN b.type = 'text' THEN b.text
                        WHEN b.type = 'tool_result' AND typ = 'user' THEN json_text(b.content) END),
                        lambda t: t IS NOT NULL AND t <> ''), chr(10)), '') END
            WHEN typ = 'queue-operation' OR typ = 'system' THEN json_text(j.content) END AS text,
       coalesce(list_transform(list_filter(blocks, lambda b: b.type = 'tool_use'),
                lambda b: {'id': b.id, 'name': b.name, 'arguments': b.input::VARCHAR}), []) AS calls,
       list_filter(blocks, lambda b: b.type = 'tool_result') AS results,
       coalesce(list_transform(blocks, lambda b: b.type), []) AS block_types
FROM (
    SELECT p.*, p.j.type AS typ, p.j.message.content AS blocks,
           coalesce(p.j.sessionId, f.stem)
             || CASE WHEN p.j.agentId IS NOT NULL AND coalesce(p.j.isSidechain, false) THEN '/agent-' || p.j.agentId ELSE '' END
             AS session_id,
           parse_ts(p.j.timestamp) AS ts
    FROM (
        SELECT fid, line, blank, bad_excerpt, j,
               CASE WHEN NOT blank AND (j IS NULL OR j.type IS NULL OR (j.type IN ('user', 'assistant') AND j.message.role IS NULL))
                    THEN left(txt, 120) END AS excerpt,
               CASE WHEN NOT blank AND j IS NOT NULL AND j.type IS NULL THEN json_type(txt) END AS shape,
               -- message.content is a block list (parsed above, once) or a plain string (read here, small lines)
               CASE WHEN j.type IN ('user', 'assistant') AND j.message.content IS NULL
                    THEN json_extract_string(txt, '$.message.content') END AS content_str
        FROM (SELECT s.fid, s.line, s.txt, s.blank, s.bad_excerpt,
                     CASE WHEN s.txt IS NOT NULL AND NOT s.blank THEN try(json_transform(s.txt, '{
                       "type":"VARCHAR","subtype":"VARCHAR","uuid":"VARCHAR","parentUuid":"VARCHAR","sessionId":"VARCHAR",
                       "agentId":"VARCHAR","isSidechain":"BOOLEAN","isMeta":"BOOLEAN","isCompactSummary":"BOOLEAN",
                       "timestamp":"JSON","requestId":"VARCHAR","operation":"VARCHAR","content":"JSON","version":"VARCHAR",
                       "permissionMode":"VARCHAR","sourceToolAssistantUUID":"VARCHAR","userType":"VARCHAR",
                       "message":{"id":"VARCHAR","role":"VARCHAR","model":"VARCHAR","stop_reason":"VARCHAR",
                                  "content":[{"type":"VARCHAR","text":"VARCHAR","id":"VARCHAR","name":"VARCHAR","input":"JSON",
                                              "tool_use_id":"VARCHAR","content":"JSON","is_error":"BOOLEAN"}],
                                  "usage":{"input_tokens":"BIGINT","output_tokens":"BIGINT",
                                           "cache_read_input_tokens":"BIGINT","cache_creation_input_tokens":"BIGINT"}}}')) END AS j
              FROM stage_lines s)
    ) p JOIN batch_files f USING (fid)
);

-- a record whose uuid was already seen in the same session of the file is a duplicate (Claude Code
-- re-writes lines on resume; a resumed session re-logging the old session's last record keeps it)
CREATE OR REPLACE TEMP TABLE cc_dups AS
SELECT fid, line FROM (
    SELECT fid, line, row_number() OVER (PARTITION BY fid, sid, uuid ORDER BY line) AS k
    FROM (SELECT fid, line, j.sessionId AS sid, j.uuid AS uuid FROM cc
          WHERE (fid, j.sessionId, j.uuid) IN (SELECT (fid, j.sessionId, j.uuid) FROM cc WHERE j.uuid IS NOT NULL
                                               GROUP BY ALL HAVING count(*) > 1)))
WHERE k > 1
UNION
SELECT c.fid, c.line FROM cc c
JOIN (SELECT b.fid, e.record_id, e.session_id FROM events e JOIN batch_files b ON e.file = b.file AND e.line < b.start_line) p
  ON p.fid = c.fid AND p.record_id = c.j.uuid AND split_part(p.session_id, '/', 1) = c.j.sessionId;

CREATE OR REPLACE TEMP TABLE fmt_fates AS
SELECT fid, line,
       CASE WHEN bad_excerpt IS NOT NULL OR (NOT blank AND (j IS NULL OR typ IS NULL)) THEN 'reject'
            WHEN blank OR d.line IS NOT NULL THEN 'skip'
            WHEN typ IN ('user', 'assistant') AND j.message.role IS NULL THEN 'reject'
            WHEN typ IN ('user', 'assistant', 'system') THEN 'event'
            WHEN typ = 'queue-operation' AND j.operation = 'enqueue' THEN 'event'
            ELSE 'skip' END AS fate,
       CASE WHEN bad_excerpt IS NOT NULL THEN 'invalid UTF-8'
            WHEN blank THEN 'blank_line'
            WHEN j IS NULL THEN 'invalid JSON'
            WHEN typ IS NULL AND shape <> 'OBJECT' THEN 'not a JSON object'
            WHEN typ IS NULL THEN 'missing field: type'
            WHEN d.line IS NOT NULL THEN 'duplicate_record'
            WHEN typ IN ('user', 'assistant') AND j.message.role IS NULL THEN 'missing or malformed field: message'
            WHEN typ = 'queue-operation' THEN 'queue-operation:' || coalesce(j.operation, 'unknown')
            ELSE typ END AS label,
       coalesce(bad_excerpt, excerpt) AS excerpt
FROM cc LEFT JOIN cc_dups d USING (fid, line);

CREATE OR REPLACE TEMP VIEW fmt_events AS
WITH ev AS (SELECT c.* FROM cc c JOIN fmt_fates f USING (fid, line) WHERE f.fate = 'event')
-- user lines: prompts, harness-written text, tool results
SELECT fid, line, line AS last_line, 0 AS part, 1 AS n_records, session_id, ts, ts AS ts_end,
       'per_message' AS ts_quality, 'user' AS role,
       CASE WHEN len(results) > 0 THEN 'tool_result' ELSE 'message' END AS kind, text,
       []::STRUCT(id VARCHAR, name VARCHAR, arguments VARCHAR)[] AS tool_calls,
       results[1].tool_use_id AS tool_call_id,
       NULL::VARCHAR AS finish_reason, NULL::VARCHAR AS initiator, j.message.id AS message_id,
       j.uuid AS record_id, j.parentUuid AS parent_id, NULL::VARCHAR AS turn_id, NULL::VARCHAR AS model,
       coalesce(j.isSidechain, false) AS is_sidechain, NULL::BIGINT AS tokens_in, NULL::BIGINT AS tokens_out,
       json_object('isMeta', j.isMeta, 'isCompactSummary', j.isCompactSummary, 'agentId', j.agentId,
                   'permissionMode', j.permissionMode, 'version', j.version, 'is_error', results[1].is_error,
                   'sourceToolAssistantUUID', j.sourceToolAssistantUUID,
                   'content_is_string', content_str IS NOT NULL) AS meta
FROM ev WHERE typ = 'user'
UNION ALL
-- queue-operation enqueue: text a person typed while the agent was busy
SELECT fid, line, line, 0, 1, session_id, ts, ts, 'per_message', 'user', 'queued_input',
       text, [], NULL, NULL, NULL, NULL, j.uuid, j.parentUuid, NULL, NULL,
       coalesce(j.isSidechain, false), NULL, NULL,
       json_object('operation', j.operation, 'isMeta', j.isMeta, 'version', j.version)
FROM ev WHERE typ = 'queue-operation'
UNION ALL
-- system lines: turn_duration / stop_hook_summary / compact_boundary / local_command ...
SELECT fid, line, line, 0, 1, session_id, ts, ts, 'per_message', 'system',
       CASE j.subtype WHEN 'turn_duration' THEN 'turn_end' WHEN 'compact_boundary' THEN 'compaction' ELSE 'system' END,
       text, [], NULL, NULL, NULL, NULL, j.uuid, j.parentUuid, NULL, NULL,
       coalesce(j.isSidechain, false), NULL, NULL,
       json_object('subtype', j.subtype, 'isMeta', j.isMeta, 'version', j.version)
FROM ev WHERE typ = 'system'
UNION ALL
-- assistant lines merged per API message (message.id); a line without id is its own reply
SELECT fid, min(line), max(line), 0, count(*)::INTEGER, any_value(session_id),
       arg_min(ts, line), arg_max(ts, line), 'per_message', 'assistant', 'message',
       string_agg(text, chr(10) ORDER BY line) FILTER (WHERE text IS NOT NULL),
       flatten(list(calls ORDER BY line)),
       NULL,
       arg_max(j.message.stop_reason, line) FILTER (WHERE j.message.stop_reason IS NOT NULL),
       NULL, any_value(j.message.id), arg_min(j.uuid, line), arg_min(j.parentUuid, line), NULL,
       arg_max(j.message.model, line) FILTER (WHERE j.message.model IS NOT NULL),
       bool_or(coalesce(j.isSidechain, false)),
       arg_max(j.message.usage.input_tokens + coalesce(j.message.usage.cache_read_input_tokens, 0)
               + coalesce(j.message.usage.cache_creation_input_tokens, 0), line)
           FILTER (WHERE j.message.usage.input_tokens IS NOT NULL),
       arg_max(j.message.usage.output_tokens, line) FILTER (WHERE j.message.usage.output_tokens IS NOT NULL),
       json_object('isMeta', bool_or(j.isMeta), 'requestId', any_value(j.requestId),
                   'block_types', flatten(list(block_types ORDER BY line)), 'version', any_value(j.version))
FROM (SELECT *, sum(CASE WHEN j.message.id IS NULL OR j.message.id IS DISTINCT FROM prev_id THEN 1 ELSE 0 END)
                   OVER (PARTITION BY fid, session_id ORDER BY line) AS run
      FROM (SELECT *, lag(j.message.id) OVER (PARTITION BY fid, session_id ORDER BY line) AS prev_id
            FROM ev WHERE typ = 'assistant'))
-- a run of lines of one message.id in one session: a reused id elsewhere (another session, or much later)
-- is another reply, and a chunked or resumed read, which sees only the open run, merges the same lines
GROUP BY fid, session_id, run;

-- Claude lines carry their own session id and model: nothing to carry to a later ingest
CREATE OR REPLACE TEMP TABLE fmt_ctx AS
SELECT fid, NULL::VARCHAR AS ctx_session, NULL::VARCHAR AS ctx_model, NULL::VARCHAR AS ctx_turn FROM batch_files;
