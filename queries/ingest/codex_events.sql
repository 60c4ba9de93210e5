-- Codex rollout JSONL -> fmt_events + fmt_fates.   Input: stage_lines, batch_files.
-- A response_item user message and the event_msg/user_message next to it are one human message
-- (meta.paired = true; paired by position, text only as a tie-break: see cx_pairs); an unpaired user/developer item is harness-injected context. The model
-- output items of one response (assistant message + function/custom tool calls, nothing in between
-- that breaks the round) form one assistant event. UI mirrors (agent_message, agent_reasoning) and
-- token_count snapshots never become events.
CREATE OR REPLACE TEMP TABLE cx_cls AS
SELECT fid, line, blank, bad_excerpt, j,
       CASE WHEN NOT blank AND (j IS NULL OR j.type IS NULL) THEN left(txt, 120) END AS excerpt,
       CASE WHEN NOT blank AND j IS NOT NULL AND j.type IS NULL THEN json_type(txt) END AS shape,
       parse_ts(j.timestamp) AS ts,
       j.type || coalesce(':' || j.payload.type, '') AS rtype,
       CASE WHEN j.type = 'response_item' AND j.payload.type = 'message' THEN
              nullif(array_to_string(list_filter(list_transform(json_extract(j.payload.content, '$[*]'),
                     lambda p: p ->> 'text'), lambda t: t IS NOT NULL), chr(10)), '') END AS item_text
FROM (
SELECT s.fid, s.line, s.txt, s.blank, s.bad_excerpt,
       CASE WHEN s.txt IS NOT NULL AND NOT s.blank THEN parse_line(s.txt, '{
         "timestamp":"JSON","type":"VARCHAR",
         "payload":{"type":"VARCHAR","id":"VARCHAR","role":"VARCHAR","content":"JSON","phase":"VARCHAR",
                    "name":"VARCHAR","arguments":"JSON","input":"JSON","call_id":"VARCHAR","output":"JSON",
                    "action":"JSON","message":"VARCHAR","turn_id":"VARCHAR","model":"VARCHAR","reason":"VARCHAR",
                    "originator":"VARCHAR","cli_version":"VARCHAR","source":"JSON","model_provider":"VARCHAR",
                    "info":{"last_token_usage":{"input_tokens":"BIGINT","output_tokens":"BIGINT"}}}}') END AS j
FROM stage_lines s);

-- Pairing by position: a Codex turn writes the human's prompt twice, the response_item user
-- message and the event_msg/user_message, next to each other (PROVENANCE §3/§12: item then event in
-- every real rollout). Each user_message takes the user item adjacent to it in the file's sequence of
-- conversation records (user/developer items, user_message events, model output, tool output, turn
-- markers, compaction; token counts, turn_context, reasoning and session_meta lines in between do not
-- separate them), so a sanitised export whose two copies carry different placeholder words still
-- pairs. Text only breaks ties: an event with a user item on both sides takes the one with its text,
-- else the one before it; an item claimed by two events keeps the one with its text, else the one
-- after it. A harness fragment (codex_fragment) is no candidate for an event of another text. What
-- position leaves unpaired falls back to the earlier rule: the k-th remaining item of
-- a text with the k-th remaining event of that text.
-- a harness fragment (Codex's is_contextual_user_fragment: an open tag at the start, a close tag at the
-- end; or the AGENTS.md header) never pairs with a user_message of another text
CREATE OR REPLACE TEMP MACRO codex_fragment(t) AS
    regexp_matches(t, '(?s)^<[A-Za-z_]+>.*</[A-Za-z_]+>$') OR starts_with(t, '# AGENTS.md instructions for');

CREATE OR REPLACE TEMP TABLE cx_pairs AS
WITH seq AS (
    SELECT fid, line, ts, rtype, j.payload.role AS role,
           trim(CASE WHEN rtype = 'event_msg:user_message' THEN j.payload.message ELSE item_text END) AS t,
           row_number() OVER (PARTITION BY fid ORDER BY line) AS pos
    FROM cx_cls
    WHERE rtype IN ('response_item:message', 'response_item:function_call', 'response_item:custom_tool_call',
                    'response_item:local_shell_call', 'response_item:web_search_call',
                    'response_item:tool_search_call', 'response_item:function_call_output',
                    'response_item:custom_tool_call_output', 'response_item:tool_search_output',
                    'event_msg:user_message', 'event_msg:task_started', 'event_msg:task_complete',
                    'event_msg:turn_aborted', 'compacted')
), nb AS (
    SELECT *, lag(line) OVER w AS p_line, lag(rtype) OVER w AS p_rtype, lag(role) OVER w AS p_role, lag(t) OVER w AS p_t,
              lead(line) OVER w AS n_line, lead(rtype) OVER w AS n_rtype, lead(role) OVER w AS n_role, lead(t) OVER w AS n_t
    FROM seq WINDOW w AS (PARTITION BY fid ORDER BY pos)
), cand AS (   -- each event's chosen neighbour
    SELECT fid, line AS msg_line, ts AS msg_ts,
           CASE WHEN prev_ok AND next_ok THEN CASE WHEN n_t IS NOT DISTINCT FROM t AND p_t IS DISTINCT FROM t THEN n_line ELSE p_line END
                WHEN prev_ok THEN p_line ELSE n_line END AS item_line,
           CASE WHEN prev_ok AND next_ok THEN CASE WHEN n_t IS NOT DISTINCT FROM t AND p_t IS DISTINCT FROM t THEN n_t ELSE p_t END
                WHEN prev_ok THEN p_t ELSE n_t END IS NOT DISTINCT FROM t AS same_text,
           NOT (prev_ok AND NOT (next_ok AND n_t IS NOT DISTINCT FROM t AND p_t IS DISTINCT FROM t)) AS item_after
    FROM (SELECT *, p_rtype = 'response_item:message' AND p_role = 'user' AND p_t IS NOT NULL
                      AND (p_t = t OR NOT codex_fragment(p_t)) AS prev_ok,
                    n_rtype = 'response_item:message' AND n_role = 'user' AND n_t IS NOT NULL
                      AND (n_t = t OR NOT codex_fragment(n_t)) AS next_ok
          FROM nb WHERE rtype = 'event_msg:user_message' AND t IS NOT NULL)
    WHERE prev_ok OR next_ok
), pos_pairs AS (
    SELECT fid, item_line, msg_line, msg_ts FROM (
        SELECT *, row_number() OVER (PARTITION BY fid, item_line ORDER BY same_text DESC, item_after ASC, msg_line) AS k
        FROM cand) WHERE k = 1
), items AS (
    SELECT fid, line, trim(item_text) AS t,
           row_number() OVER (PARTITION BY fid, trim(item_text) ORDER BY line) AS k
    FROM cx_cls WHERE rtype = 'response_item:message' AND j.payload.role = 'user' AND item_text IS NOT NULL
      AND (fid, line) NOT IN (SELECT (fid, item_line) FROM pos_pairs)
), msgs AS (
    SELECT fid, line, ts, trim(j.payload.message) AS t,
           row_number() OVER (PARTITION BY fid, trim(j.payload.message) ORDER BY line) AS k
    FROM cx_cls WHERE rtype = 'event_msg:user_message' AND j.payload.message IS NOT NULL
      AND (fid, line) NOT IN (SELECT (fid, msg_line) FROM pos_pairs)
)
SELECT fid, item_line, msg_line, msg_ts FROM pos_pairs
UNION ALL
SELECT i.fid, i.line AS item_line, m.line AS msg_line, m.ts AS msg_ts FROM items i JOIN msgs m USING (fid, t, k);

CREATE OR REPLACE TEMP VIEW cx_lines AS
SELECT c.*,
       CASE WHEN rtype IN ('response_item:function_call', 'response_item:custom_tool_call',
                           'response_item:local_shell_call', 'response_item:web_search_call',
                           'response_item:tool_search_call')
              OR (rtype = 'response_item:message' AND j.payload.role = 'assistant') THEN 'out'
            WHEN rtype IN ('response_item:message', 'response_item:function_call_output',
                           'response_item:custom_tool_call_output', 'response_item:tool_search_output',
                           'event_msg:user_message', 'event_msg:task_started', 'event_msg:task_complete',
                           'event_msg:turn_aborted', 'compacted', 'session_meta') THEN 'brk'
            ELSE 'neutral' END AS cls,
       p1.msg_line AS paired_msg_line, p1.msg_ts AS paired_msg_ts, p2.item_line AS paired_item_line
FROM cx_cls c
LEFT JOIN cx_pairs p1 ON p1.fid = c.fid AND p1.item_line = c.line
LEFT JOIN cx_pairs p2 ON p2.fid = c.fid AND p2.msg_line = c.line;

CREATE OR REPLACE TEMP TABLE cx_ctx AS
SELECT l.*,
       sum(CASE WHEN cls = 'brk' THEN 1 ELSE 0 END) OVER w AS grp,
       coalesce(last_value(CASE WHEN rtype IN ('turn_context', 'event_msg:task_started') THEN j.payload.turn_id END IGNORE NULLS) OVER w, f.ctx_turn) AS turn_id,
       coalesce(last_value(CASE WHEN rtype = 'turn_context' THEN j.payload.model END IGNORE NULLS) OVER w, f.ctx_model) AS model,
       coalesce(first_value(CASE WHEN rtype = 'session_meta' THEN j.payload.id END IGNORE NULLS)
                  OVER (PARTITION BY l.fid ORDER BY line ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING),
                f.ctx_session, f.stem) AS session_id,
       first_value(CASE WHEN rtype = 'session_meta' THEN j.payload.cli_version END IGNORE NULLS)
           OVER (PARTITION BY l.fid ORDER BY line ROWS BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING) AS cli_version
FROM cx_lines l JOIN batch_files f USING (fid)
WINDOW w AS (PARTITION BY l.fid ORDER BY line ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW);

CREATE OR REPLACE TEMP TABLE fmt_fates AS
SELECT fid, line,
       CASE WHEN bad_excerpt IS NOT NULL OR (NOT blank AND (j IS NULL OR j.type IS NULL)) THEN 'reject'
            WHEN blank THEN 'skip'
            WHEN rtype = 'response_item:message' AND coalesce(j.payload.role, '') NOT IN ('user', 'developer', 'system', 'assistant') THEN 'reject'  -- no event reads it
            WHEN cls = 'out' OR rtype IN ('response_item:message', 'response_item:function_call_output',
                 'response_item:custom_tool_call_output', 'response_item:tool_search_output',
                 'event_msg:user_message', 'event_msg:task_started', 'event_msg:task_complete',
                 'event_msg:turn_aborted', 'compacted') THEN 'event'
            ELSE 'skip' END AS fate,
       CASE WHEN bad_excerpt IS NOT NULL THEN 'invalid UTF-8'
            WHEN blank THEN 'blank_line'
            WHEN j IS NULL THEN 'invalid JSON'
            WHEN j.type IS NULL AND shape <> 'OBJECT' THEN 'not a JSON object'
            WHEN j.type IS NULL THEN 'missing field: type'
            WHEN rtype = 'response_item:message' AND coalesce(j.payload.role, '') NOT IN ('user', 'developer', 'system', 'assistant') THEN 'missing or malformed field: payload.role'
            WHEN rtype IN ('event_msg:agent_message', 'event_msg:agent_reasoning', 'event_msg:context_compacted')
                 THEN 'mirror:' || j.payload.type
            WHEN rtype = 'event_msg:token_count' THEN 'token_count'
            WHEN rtype = 'response_item:reasoning' THEN 'reasoning'
            -- a record type, or a response item (what the model saw or said), this reader does not know:
            -- skipped and counted as drift with the session's cli_version (event_msg types are UI events,
            -- skipped by type: new ones appear with most releases and carry nothing the model saw)
            WHEN j.type NOT IN ('session_meta', 'response_item', 'event_msg', 'turn_context', 'compacted')
                 OR (j.type = 'response_item' AND coalesce(j.payload.type, '') NOT IN ('message', 'reasoning', 'function_call',
                     'function_call_output', 'custom_tool_call', 'custom_tool_call_output', 'local_shell_call',
                     'web_search_call', 'ghost_snapshot', 'tool_search_call', 'tool_search_output', 'compaction',
                     'compaction_summary', 'image_generation_call'))
                 THEN 'unknown_shape:type ' || rtype || coalesce(' @' || cli_version, '')
            ELSE rtype END AS label,
       coalesce(bad_excerpt, excerpt, CASE WHEN rtype = 'response_item:message' AND coalesce(j.payload.role, '') NOT IN ('user', 'developer', 'system', 'assistant') THEN left(j::VARCHAR, 120) END) AS excerpt
FROM cx_ctx;

CREATE OR REPLACE TEMP VIEW fmt_events AS
-- user / developer items: paired = the human's prompt; unpaired = harness-injected context
SELECT fid, least(line, coalesce(paired_msg_line, line)) AS line, greatest(line, coalesce(paired_msg_line, line)) AS last_line,
       0 AS part, CASE WHEN paired_msg_line IS NULL THEN 1 ELSE 2 END AS n_records, session_id,
       CASE WHEN paired_msg_line < line THEN paired_msg_ts ELSE ts END AS ts,
       CASE WHEN paired_msg_line > line THEN paired_msg_ts ELSE ts END AS ts_end,
       'per_message' AS ts_quality, CASE WHEN j.payload.role = 'developer' THEN 'system' ELSE 'user' END AS role,
       CASE WHEN paired_msg_line IS NULL THEN 'context' ELSE 'message' END AS kind, item_text AS text,
       []::STRUCT(id VARCHAR, name VARCHAR, arguments VARCHAR)[] AS tool_calls, NULL::VARCHAR AS tool_call_id,
       NULL::VARCHAR AS finish_reason, NULL::VARCHAR AS initiator, j.payload.id AS message_id, NULL::VARCHAR AS record_id,
       NULL::VARCHAR AS parent_id, turn_id, NULL::VARCHAR AS model, false AS is_sidechain,
       NULL::BIGINT AS tokens_in, NULL::BIGINT AS tokens_out,
       json_object('paired', paired_msg_line IS NOT NULL, 'codex_role', j.payload.role) AS meta
FROM cx_ctx WHERE rtype = 'response_item:message' AND j.payload.role IN ('user', 'developer', 'system')
UNION ALL
-- event_msg/user_message without a response item: human input that arrived mid-turn
SELECT fid, line, line, 0, 1, session_id, ts, ts, 'per_message', 'user', 'queued_input', j.payload.message,
       [], NULL, NULL, NULL, NULL, NULL, NULL, turn_id, NULL, false, NULL, NULL,
       json_object('paired', false, 'codex_event', 'user_message')
FROM cx_ctx WHERE rtype = 'event_msg:user_message' AND paired_item_line IS NULL
UNION ALL
-- tool outputs
SELECT fid, line, line, 0, 1, session_id, ts, ts, 'per_message', 'tool', 'tool_result',
       coalesce(json_text(j.payload.output), j.payload.output::VARCHAR), [], j.payload.call_id, NULL, NULL, NULL,
       NULL, NULL, turn_id, NULL, false, NULL, NULL, json_object('codex_type', j.payload.type)
FROM cx_ctx WHERE rtype IN ('response_item:function_call_output', 'response_item:custom_tool_call_output',
                            'response_item:tool_search_output')
UNION ALL
-- turn markers and compaction
SELECT fid, line, line, 0, 1, session_id, ts, ts, 'per_message', 'system',
       CASE rtype WHEN 'event_msg:task_started' THEN 'turn_start' WHEN 'event_msg:task_complete' THEN 'turn_end'
                  WHEN 'event_msg:turn_aborted' THEN 'turn_aborted' ELSE 'compaction' END,
       CASE WHEN rtype = 'event_msg:turn_aborted' THEN j.payload.reason
            WHEN rtype = 'compacted' THEN j.payload.message END,
       [], NULL, NULL, NULL, NULL, NULL, NULL, coalesce(j.payload.turn_id, turn_id), NULL, false, NULL, NULL,
       json_object('codex_type', rtype)
FROM cx_ctx WHERE rtype IN ('event_msg:task_started', 'event_msg:task_complete', 'event_msg:turn_aborted', 'compacted')
UNION ALL
-- one assistant event per model response (its output items up to the next breaking record)
SELECT o.fid, min(o.line), max(o.line), 0, count(*)::INTEGER, any_value(o.session_id), min(o.ts), max(o.ts),
       'per_message', 'assistant', 'message',
       nullif(string_agg(o.item_text, chr(10) ORDER BY o.line) FILTER (WHERE o.item_text IS NOT NULL), ''),
       list({'id': o.j.payload.call_id,
             'name': coalesce(o.j.payload.name, replace(o.j.payload.type, '_call', '')),
             'arguments': coalesce(o.j.payload.arguments ->> '$', o.j.payload.input ->> '$', o.j.payload.action::VARCHAR)}
            ORDER BY o.line) FILTER (WHERE o.j.payload.type <> 'message'),
       NULL, NULL, NULL, arg_min(o.j.payload.id, o.line), NULL, NULL, arg_max(o.turn_id, o.line),
       arg_max(o.model, o.line), false,
       any_value(tk.tokens_in), any_value(tk.tokens_out),
       json_object('phase', arg_max(o.j.payload.phase, o.line) FILTER (WHERE o.j.payload.phase IS NOT NULL),
                   'phases', list(o.j.payload.phase ORDER BY o.line) FILTER (WHERE o.j.payload.phase IS NOT NULL))
FROM cx_ctx o
LEFT JOIN (SELECT fid, grp, arg_max(j.payload.info.last_token_usage.input_tokens, line) AS tokens_in,
                  arg_max(j.payload.info.last_token_usage.output_tokens, line) AS tokens_out
           FROM cx_ctx WHERE rtype = 'event_msg:token_count' AND j.payload.info IS NOT NULL GROUP BY fid, grp) tk
       ON tk.fid = o.fid AND tk.grp = o.grp
WHERE o.cls = 'out'
GROUP BY o.fid, o.grp;

-- what a later ingest of this file's tail needs to know: its session and the model in force
CREATE OR REPLACE TEMP TABLE fmt_ctx AS
SELECT fid, any_value(session_id) AS ctx_session, arg_max(model, line) AS ctx_model,
       arg_max(turn_id, line) AS ctx_turn FROM cx_ctx GROUP BY fid;

-- where a re-read must start to rebuild an assistant event (file_stats.sql, hold_tail.sql): its tokens come
-- from the token_count snapshot of its round, which Codex writes before the output items as often as after
-- them (after the turn_context). So a pass resuming at the event's first line would lose them: it resumes at
-- the first line after the breaking record that opens the round, with the context in force just before
-- that line (the previous line's; the batch's starting context when it is the batch's first line).
CREATE OR REPLACE TEMP TABLE fmt_resume AS
WITH r AS (
    SELECT fid, min(line) FILTER (WHERE cls = 'out') AS line, min(line) FILTER (WHERE cls <> 'brk') AS from_line
    FROM cx_ctx GROUP BY fid, grp HAVING count(*) FILTER (WHERE cls = 'out') > 0
)
SELECT r.fid, r.line, r.from_line, s.session_id AS ctx_session,
       CASE WHEN p.line IS NULL THEN f.ctx_model ELSE p.model END AS ctx_model,
       CASE WHEN p.line IS NULL THEN f.ctx_turn ELSE p.turn_id END AS ctx_turn
FROM r JOIN batch_files f USING (fid)
JOIN (SELECT fid, any_value(session_id) AS session_id FROM cx_ctx GROUP BY fid) s USING (fid)
LEFT JOIN cx_ctx p ON p.fid = r.fid AND p.line = r.from_line - 1;
