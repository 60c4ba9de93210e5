-- Claude Code session JSONL -> fmt_events + fmt_fates + fmt_ctx.   Input: stage_lines, batch_files.
-- One API reply written over several lines (one per content block, same message.id) becomes one
-- assistant event; tool results stay user-role events of kind tool_result; queue-operation enqueue
-- text (typed while the agent worked) is a user event of kind queued_input; system lines are system
-- events. All per-line work happens in the first statement, one parallel pass over the raw lines,
-- which keeps only the narrow columns later steps need (the parsed record itself is never stored:
-- materialising the nested struct costs more than parsing it).
-- The join with batch_files (for the file's stem) must build its hash table on batch_files, as written: the
-- arrow scan's row estimate is about 0, so the optimizer built it on the parsed lines (every line's parsed
-- struct copied into the hash table) and probed it with the batch's few files, one chunk, so the whole
-- projection (texts, block lists, times) ran on one thread. This statement over the 311 MB real-shaped tree in
-- the ingest's five 64 MB batches, 2 CPUs, 3 runs: 0.69-0.75 s wall before, 0.62 s with the rule off for it
-- (CPU 0.93-1.03 s before, 1.07 s after: the second thread now works; whole-process CPU is not lower).
SET disabled_optimizers = 'build_side_probe_side';

CREATE OR REPLACE TEMP TABLE cc AS
SELECT fid, line, blank, bad_excerpt, j IS NOT NULL AS parsed,
       CASE WHEN NOT blank AND (j IS NULL OR j.type IS NULL OR (j.type IN ('user', 'assistant') AND j.message.role IS NULL))
            THEN left(txt, 120) END AS excerpt,
       CASE WHEN NOT blank AND j IS NOT NULL AND j.type IS NULL THEN json_type(txt) END AS shape,
       j.type AS typ, j.subtype, j.uuid, j.parentUuid AS parent_uuid, j.sessionId AS sid, j.agentId AS agent_id,
       coalesce(j.isSidechain, false) AS is_sidechain, j.isMeta AS is_meta, j.isCompactSummary AS is_compact,
       j.requestId AS request_id, j.operation, j.version, j.permissionMode AS permission_mode,
       j.sourceToolAssistantUUID AS source_tool_uuid, j.message.role IS NOT NULL AS has_role,
       j.compactMetadata.trigger AS boundary_trigger,
       j.message.id AS msg_id, j.message.model AS model, j.message.stop_reason AS stop_reason,
       j.message.usage.input_tokens + coalesce(j.message.usage.cache_read_input_tokens, 0)
           + coalesce(j.message.usage.cache_creation_input_tokens, 0) AS tokens_in,
       j.message.usage.output_tokens AS tokens_out,
       coalesce(j.sessionId, f.stem)
         || CASE WHEN j.agentId IS NOT NULL AND coalesce(j.isSidechain, false) THEN '/agent-' || j.agentId ELSE '' END
         AS session_id,
       parse_ts(j.timestamp) AS ts,
       content_str IS NOT NULL AS content_is_string,
       -- (no CASE around the block list: a CASE slices every nested vector it touches, which costs
       -- more than the lambdas; lines of other types have no block list, so the lambda gives NULL)
       -- (a tool result's content is read as VARCHAR: a string's text, but also an object's, a list's, a number's
       -- or a boolean's JSON. A line where any result's text could be such JSON (arr_txt: it starts with [ or {,
       -- is true / false, or casts to a number) gets its text from cc_arr below, which reads the content's
       -- type; any other result's text is a string's, used as it is. As JSON, every string result's text was
       -- written back as JSON and parsed again by ->> (first20: -2.3 % instructions of a Claude ingest).
       -- json_text's list branch is a lambda inside this lambda, and its mere presence made the whole
       -- statement 13 % slower, for the 2 % of results that are lists)
       -- (the cast to DOUBLE reads the whole string, a tool result of kilobytes included: it runs only on a text that
       -- could be a number, whitespace around letters, digits and . _ + - (every text DuckDB casts to a DOUBLE is
       -- such a text: tests/unit/test_claude_line_types.py checks it). A CASE, as an AND evaluates both sides; the
       -- regex stops at the first other character. The parse of a 128 MB batch, one thread: 0.41-0.44 -> 0.34 CPU s)
       coalesce(content_str,
                nullif(array_to_string(list_filter(list_transform(j.message.content, lambda b: CASE
                    WHEN j.type NOT IN ('user', 'assistant') THEN NULL
                    WHEN b.type = 'text' THEN b.text
                    WHEN b.type = 'tool_result' AND j.type = 'user' THEN b.content END),
                    lambda t: t IS NOT NULL AND t <> ''), chr(10)), ''),
                json_text(CASE WHEN j.type IN ('queue-operation', 'system') THEN j.content END)) AS text,
       CASE WHEN j.type = 'user' AND list_contains(list_transform(j.message.content,
                 lambda b: b.type = 'tool_result' AND (starts_with(b.content, '[') OR starts_with(b.content, '{')
                                                       OR b.content IN ('true', 'false')
                                                       OR CASE WHEN regexp_full_match(b.content, '[ \t\n\v\f\r]*[0-9A-Za-z._+-]+[ \t\n\v\f\r]*')
                                                               THEN TRY_CAST(b.content AS DOUBLE) IS NOT NULL ELSE false END)), true)
            THEN txt END AS arr_txt,
       coalesce(list_transform(list_filter(j.message.content, lambda b: b.type = 'tool_use'),
                lambda b: {'id': b.id, 'name': b.name, 'arguments': b.input::VARCHAR}), []) AS calls,
       len(results) AS n_results, results[1].id AS result_id, results[1].err AS result_is_error,
       coalesce(list_transform(j.message.content, lambda b: b.type), []) AS block_types
FROM (
    SELECT s.fid, s.line, s.txt, s.blank, s.bad_excerpt, s.j,
           -- message.content is a block list (parsed above, once) or a plain string (read here, small lines)
           CASE WHEN s.j.type IN ('user', 'assistant') AND s.j.message.content IS NULL
                THEN json_extract_string(s.txt, '$.message.content') END AS content_str,
           list_filter(list_transform(s.j.message.content,
                                      lambda b: {'id': b.tool_use_id, 'err': b.is_error, 'r': b.type = 'tool_result'}),
                       lambda x: x.r) AS results
    FROM (SELECT fid, line, txt, blank, bad_excerpt,
                 CASE WHEN txt IS NOT NULL AND NOT blank THEN parse_line(txt, '{
                   "type":"VARCHAR","subtype":"VARCHAR","uuid":"VARCHAR","parentUuid":"VARCHAR","sessionId":"VARCHAR",
                   "agentId":"VARCHAR","isSidechain":"BOOLEAN","isMeta":"BOOLEAN","isCompactSummary":"BOOLEAN",
                   "timestamp":"JSON","requestId":"VARCHAR","operation":"VARCHAR","content":"JSON","version":"VARCHAR",
                   "permissionMode":"VARCHAR","sourceToolAssistantUUID":"VARCHAR","compactMetadata":{"trigger":"VARCHAR"},
                   "message":{"id":"VARCHAR","role":"VARCHAR","model":"VARCHAR","stop_reason":"VARCHAR",
                              "content":[{"type":"VARCHAR","text":"VARCHAR","id":"VARCHAR","name":"VARCHAR","input":"JSON",
                                          "tool_use_id":"VARCHAR","content":"VARCHAR","is_error":"BOOLEAN"}],
                              "usage":{"input_tokens":"BIGINT","output_tokens":"BIGINT",
                                       "cache_read_input_tokens":"BIGINT","cache_creation_input_tokens":"BIGINT"}}}') END AS j
          FROM stage_lines) s
) p JOIN batch_files f USING (fid);

RESET disabled_optimizers;

-- The text of a user line with a tool result whose content is a block list, or whose text could be an object's,
-- a number's or a boolean's JSON (arr_txt: such lines only, parsed again with the fields the text needs, the
-- content as JSON), as the first statement would give it with json_text for every result (json_text of a string
-- is its text, of an object, number or boolean NULL: the rule of the other lines);
-- fmt_events takes it instead of cc.text. The blocks are unnested here, so json_text's own lambda is not
-- nested in another (a nested lambda cost about 0.1 ms a line: 13-23 ms for a batch's 161 such lines).
-- (message.content is a list there, so content_str is NULL; a user line has no queue / system content.)
CREATE OR REPLACE TEMP TABLE cc_arr AS
SELECT fid, line, string_agg(t, chr(10) ORDER BY i) FILTER (WHERE t IS NOT NULL AND t <> '') AS text
FROM (SELECT fid, line, x.i,
             CASE WHEN typ NOT IN ('user', 'assistant') THEN NULL
                  WHEN x.b.type = 'text' THEN x.b.text
                  WHEN x.b.type = 'tool_result' AND typ = 'user' THEN json_text(x.b.content) END AS t
      FROM (SELECT fid, line, j.type AS typ, unnest(list_transform(j.message.content, lambda b, i: {'b': b, 'i': i})) AS x
            FROM (SELECT fid, line, parse_line(arr_txt, '{"type":"VARCHAR",
                      "message":{"content":[{"type":"VARCHAR","text":"VARCHAR","content":"JSON"}]}}') AS j
                  FROM cc WHERE arr_txt IS NOT NULL)))
GROUP BY fid, line;

-- a record whose uuid was already seen in the same session of the file is a duplicate (Claude Code
-- re-writes lines on resume; a resumed session re-logging the old session's last record keeps it)
CREATE OR REPLACE TEMP TABLE cc_dups AS
SELECT fid, line FROM (
    SELECT fid, line, row_number() OVER (PARTITION BY fid, sid, uuid ORDER BY line) AS k
    FROM (SELECT fid, line, sid, uuid FROM cc
          WHERE (fid, sid, uuid) IN (SELECT (fid, sid, uuid) FROM cc WHERE uuid IS NOT NULL
                                     GROUP BY ALL HAVING count(*) > 1)))
WHERE k > 1
UNION
-- (a line whose uuid an earlier chunk or ingest of its file wrote as an event's record_id, in the same session:
-- split_part(session_id, '/', 1) = sid, written as the prefix test it is (sid holds no '/': a part split at '/'
-- never equals one that does). As split_part, the optimizer made it a third join key, and its macro split every
-- earlier row's session id of the file into a list, every batch: the 1 GB file's 8th chunk spent 0.044 s of the
-- statement's 0.077 s in that join, more with each chunk. As an OR it is tested on the few record_id matches only.)
SELECT c.fid, c.line FROM cc c
JOIN (SELECT b.fid, e.record_id, e.session_id FROM events e JOIN batch_files b ON e.file = b.file AND e.line < b.start_line) p
  ON p.fid = c.fid AND p.record_id = c.uuid
  AND NOT contains(c.sid, '/') AND (p.session_id = c.sid OR starts_with(p.session_id, c.sid || '/'));

-- The lines that are not events (skips and rejects: ingest_commit.sql writes them) and their labels. The event lines,
-- most of a batch, are not written here: cc_runs and fmt_events take the lines with no row here (an anti join on a
-- build side a sixth the size), and writing every line's fate cost the statement most of its time.
CREATE OR REPLACE TEMP TABLE fmt_fates AS
SELECT * FROM (
SELECT fid, line,
       CASE WHEN bad_excerpt IS NOT NULL OR (NOT blank AND (NOT parsed OR typ IS NULL)) THEN 'reject'
            WHEN blank OR d.line IS NOT NULL THEN 'skip'
            WHEN typ IN ('user', 'assistant') AND NOT has_role THEN 'reject'
            WHEN typ IN ('user', 'assistant', 'system') THEN 'event'
            WHEN typ = 'queue-operation' AND operation = 'enqueue' THEN 'event'
            ELSE 'skip' END AS fate,
       CASE WHEN bad_excerpt IS NOT NULL THEN 'invalid UTF-8'
            WHEN blank THEN 'blank_line'
            WHEN NOT parsed THEN 'invalid JSON'
            WHEN typ IS NULL AND shape <> 'OBJECT' THEN 'not a JSON object'
            WHEN typ IS NULL THEN 'missing field: type'
            WHEN d.line IS NOT NULL THEN 'duplicate_record'
            WHEN typ IN ('user', 'assistant') AND NOT has_role THEN 'missing or malformed field: message'
            WHEN typ = 'queue-operation' THEN 'queue-operation:' || coalesce(operation, 'unknown')
            -- record types Claude Code writes that are not events (formats.md §1); any other type is a shape
            -- this reader does not know: skipped, and counted as drift with the writer's version
            WHEN typ IN ('summary', 'file-history-snapshot', 'progress', 'file-history-delta', 'last-prompt', 'mode',
                         'permission-mode', 'ai-title', 'attachment', 'custom-title') THEN typ
            ELSE 'unknown_shape:type ' || typ || coalesce(' @' || version, '') END AS label,
       coalesce(bad_excerpt, excerpt) AS excerpt
FROM cc LEFT JOIN cc_dups d USING (fid, line))
WHERE fate <> 'event';

-- a compaction summary (isCompactSummary) and the compact_boundary it hangs from (its parentUuid): the
-- boundary's compactMetadata.trigger says whether Claude Code compacted on its own ("auto": it then sends
-- the summary as a request and the model carries on; spotter 258c7280 L1256-L1261, 2.1.39) or after a typed
-- /compact ("manual": the summary is context, the next request is the person's; planetfall 09_cb2a L297-L298,
-- 35_00b4 L408-L409, 2.1.170/2.1.177). meta.compact_trigger of the summary's user event; prompts.toml reads it.
CREATE OR REPLACE TEMP TABLE cc_compact AS
SELECT s.fid, s.line, b.boundary_trigger AS summary_trigger
FROM (SELECT fid, line, parent_uuid FROM cc WHERE is_compact) s
JOIN (SELECT fid, uuid, boundary_trigger FROM cc WHERE typ = 'system' AND subtype = 'compact_boundary') b
  ON b.fid = s.fid AND b.uuid = s.parent_uuid;

-- the reply run of each assistant line (see the GROUP BY of cc_reply below), from narrow columns:
-- a window carries every column it is given, and over the full rows (texts) it cost more than the merge.
-- A reply is the lines of one (fid, session_id, msg_id, run_no): run_no is the count of prompts before the line in
-- its session (bar), or the line itself for a line without message.id (its own reply). The same groups as the
-- string 'msg:' || msg_id || '#' || bar / 'line:' || line this key once was, without building that string per
-- line, and msg_id and session_id are then keys of cc_reply's GROUP BY, not any_value aggregates.
CREATE OR REPLACE TEMP TABLE cc_runs AS
SELECT fid, line, (CASE WHEN msg_id IS NULL THEN line ELSE bar END)::BIGINT AS run_no
FROM (SELECT c.fid, c.line, c.typ, c.msg_id,
             sum(CASE WHEN c.typ = 'user' AND coalesce(c.n_results, 0) = 0 THEN 1 ELSE 0 END)
                 OVER (PARTITION BY c.fid, c.session_id ORDER BY c.line) AS bar
      FROM cc c ANTI JOIN fmt_fates f USING (fid, line)
      WHERE c.typ = 'assistant' OR (c.typ = 'user' AND coalesce(c.n_results, 0) = 0))  -- (other lines add no bar)
WHERE typ = 'assistant';

-- The assistant replies as a table, not a branch of the view: batch_keys.sql and the INSERT both read
-- fmt_events, and as a branch the replies' GROUP BY ran in each (first18: ~0.1 CPU s over TREE a second time).
-- cc_runs holds the assistant lines that are events, so its join with cc is the view's `ev` of them.
-- Its hash table must be built on cc_runs (narrow), as written: in a big ingest cc is an Arrow table (parse_batch.Held)
-- whose row estimate is about 0, and the optimizer built the hash table on cc, copying every line's texts, calls and
-- block types into it (ing22: the join 0.17 of the statement's 0.47 s operator time in a 64 MB batch).
SET disabled_optimizers = 'join_order,build_side_probe_side';

CREATE OR REPLACE TEMP TABLE cc_reply AS
-- Assistant lines merged per API message (message.id); a line without id is its own reply. The lines'
-- texts, calls and block types are gathered in one unordered list and put in line order afterwards
-- (ordered aggregates sort per group and were the INSERT's largest operator: 0.30-0.35 s a 64 MB batch)
-- (the parts put in line order by their lines' grades: list_sort compared whole structs, texts and calls included:
-- the inner GROUP BY of a 128 MB batch, one thread: the sort 13 ms over the unsorted list, the grade 4 ms)
SELECT fid, line, last_line, 0 AS part, n_records, session_id, ts, ts_end, 'per_message' AS ts_quality,
       'assistant' AS role, 'message' AS kind,
       -- (array_to_string leaves out NULLs and gives NULL for a list of NULLs only: no list_filter needed)
       array_to_string(list_transform(parts, lambda x: x.t), chr(10)) AS text,
       flatten(list_transform(parts, lambda x: x.c)) AS tool_calls,
       NULL::VARCHAR AS tool_call_id, stop_reason AS finish_reason, NULL::VARCHAR AS initiator, msg_id AS message_id,
       uuid AS record_id, parent_uuid AS parent_id, NULL::VARCHAR AS turn_id, model, is_sidechain, tokens_in, tokens_out,
       json_object('isMeta', is_meta, 'requestId', request_id,
                   'block_types', flatten(list_transform(parts, lambda x: x.b)), 'version', version) AS meta
FROM (SELECT * REPLACE (list_select(parts, list_grade_up(list_transform(parts, lambda x: x.l))) AS parts) FROM (
-- (arg_max leaves out the rows whose value is NULL, so the last line that has a stop reason, model or token count
-- gives it without a FILTER clause: without the four, 0.5 % fewer DuckDB instructions in an ingest of 34 MB, ing23)
SELECT fid, min(line) AS line, max(line) AS last_line, count(*)::INTEGER AS n_records, session_id,
       arg_min(ts, line) AS ts, arg_max(ts, line) AS ts_end,
       list({'l': line, 't': text, 'c': calls, 'b': block_types}) AS parts,
       arg_max(stop_reason, line) AS stop_reason,
       msg_id, arg_min(uuid, line) AS uuid, arg_min(parent_uuid, line) AS parent_uuid,
       arg_max(model, line) AS model,
       bool_or(is_sidechain) AS is_sidechain,
       arg_max(tokens_in, line) AS tokens_in,
       arg_max(tokens_out, line) AS tokens_out,
       bool_or(is_meta) AS is_meta, any_value(request_id) AS request_id, any_value(version) AS version
FROM cc JOIN cc_runs USING (fid, line)
-- The lines of one message.id in one session are one reply as long as nothing but tool results and other
-- replies' lines comes between them: Claude Code 2.1 sometimes writes a tool_use line after that call's
-- own tool_result (real: Sarthib7-FundWise L227/L229, planetfall 35_00b4 L164/L166), and a reply's lines
-- may straddle another reply's, so pairing goes by message.id (hence by tool-call id), not by adjacency.
-- A user line that is not a tool result (a prompt, a harness message) between two lines of one id makes
-- them two replies (a reused id after the next prompt is another reply); a chunked or resumed read,
-- which sees only the open reply, merges the same lines.
GROUP BY fid, session_id, msg_id, run_no));

RESET disabled_optimizers;

CREATE OR REPLACE TEMP VIEW fmt_events AS
-- The user lines (prompts, harness-written text, tool results), the queue-operation enqueues (text a person typed
-- while the agent was busy) and the system lines (turn_duration / stop_hook_summary / compact_boundary /
-- local_command ...) in one pass over cc's event lines, each column by the line's type. As three UNION ALL branches
-- over one `ev` CTE, DuckDB materialised the CTE (`NOT MATERIALIZED` notwithstanding: the INSERT's plan showed it),
-- copying every event line's columns, texts included, before the branches read them (ing22: the CTE 0.09-0.24 s of
-- a 64 MB batch's INSERT). cc_compact and cc_arr hold user lines only, so their joins leave the other types alone.
SELECT fid, line, line AS last_line, 0 AS part, 1 AS n_records, session_id, ts, ts AS ts_end,
       'per_message' AS ts_quality, CASE WHEN typ = 'system' THEN 'system' ELSE 'user' END AS role,
       CASE typ WHEN 'user' THEN CASE WHEN n_results > 0 THEN 'tool_result' ELSE 'message' END
                WHEN 'queue-operation' THEN 'queued_input'
                ELSE CASE subtype WHEN 'turn_duration' THEN 'turn_end' WHEN 'compact_boundary' THEN 'compaction'
                                  ELSE 'system' END END AS kind,
       CASE WHEN a.line IS NULL THEN c.text ELSE a.text END AS text,
       []::STRUCT(id VARCHAR, name VARCHAR, arguments VARCHAR)[] AS tool_calls,
       CASE WHEN typ = 'user' THEN result_id END AS tool_call_id,
       NULL::VARCHAR AS finish_reason, NULL::VARCHAR AS initiator, CASE WHEN typ = 'user' THEN msg_id END AS message_id,
       uuid AS record_id, parent_uuid AS parent_id, NULL::VARCHAR AS turn_id, NULL::VARCHAR AS model,
       is_sidechain, NULL::BIGINT AS tokens_in, NULL::BIGINT AS tokens_out,
       CASE typ WHEN 'user' THEN json_object('isMeta', is_meta, 'isCompactSummary', is_compact, 'agentId', agent_id,
                                             'permissionMode', permission_mode, 'version', version,
                                             'is_error', result_is_error, 'sourceToolAssistantUUID', source_tool_uuid,
                                             'content_is_string', content_is_string,
                                             'compact_trigger', k.summary_trigger)
                WHEN 'queue-operation' THEN json_object('operation', operation, 'isMeta', is_meta, 'version', version)
                ELSE json_object('subtype', subtype, 'isMeta', is_meta, 'version', version,
                                 'compact_trigger', boundary_trigger) END AS meta
FROM cc c ANTI JOIN fmt_fates f USING (fid, line) LEFT JOIN cc_compact k USING (fid, line) LEFT JOIN cc_arr a USING (fid, line)
WHERE typ IN ('user', 'queue-operation', 'system')
UNION ALL
-- assistant replies (cc_reply above: one per API message)
SELECT * FROM cc_reply;

-- Claude lines carry their own session id and model: nothing to carry to a later ingest
CREATE OR REPLACE TEMP TABLE fmt_ctx AS
SELECT fid, NULL::VARCHAR AS ctx_session, NULL::VARCHAR AS ctx_model, NULL::VARCHAR AS ctx_turn FROM batch_files;
