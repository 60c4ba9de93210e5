-- stallscan guard log (stallscan/guard/log.py: one JSON record per Stop-hook call) -> fmt_events + fmt_fates.
-- Input: stage_lines, batch_files. Each record becomes one system event of kind guard_decision in the
-- session 'stallscan-guard:<harness session id>' (its own session: guard records never interleave with
-- the transcript's events, whose order the replay relies on); text = the masked excerpt the guard kept
-- (stalls only); meta carries the decision fields (verdict, signature, stalls, bound, decision, reason,
-- mode, latency_ms, event, harness, session, reply_from, stop_hook_active, after_tool_round).
CREATE OR REPLACE TEMP TABLE sg AS
SELECT fid, line, txt, blank, bad_excerpt, j,
       CASE WHEN NOT blank AND (j IS NULL OR j.stallscan_guard IS NULL) THEN left(txt, 120) END AS excerpt
FROM (SELECT fid, line, txt, blank, bad_excerpt,
             CASE WHEN txt IS NOT NULL AND NOT blank THEN parse_line(txt, '{
               "stallscan_guard":"INTEGER","time":"VARCHAR","harness":"VARCHAR","event":"VARCHAR",
               "session":"VARCHAR","turn":"VARCHAR","verdict":"VARCHAR","signature":"VARCHAR","stalls":"INTEGER",
               "bound":"INTEGER","decision":"VARCHAR","reason":"VARCHAR","mode":"VARCHAR","latency_ms":"DOUBLE",
               "stop_hook_active":"BOOLEAN","after_tool_round":"BOOLEAN","reply_from":"VARCHAR","excerpt":"VARCHAR"}') END AS j
      FROM stage_lines);

CREATE OR REPLACE TEMP TABLE fmt_fates AS
SELECT fid, line,
       CASE WHEN bad_excerpt IS NOT NULL OR (NOT blank AND (j IS NULL OR j.stallscan_guard IS NULL OR j.decision IS NULL)) THEN 'reject'
            WHEN blank THEN 'skip' ELSE 'event' END AS fate,
       CASE WHEN bad_excerpt IS NOT NULL THEN 'invalid UTF-8'
            WHEN blank THEN 'blank_line'
            WHEN j IS NULL THEN 'invalid JSON'
            WHEN j.stallscan_guard IS NULL THEN 'missing field: stallscan_guard'
            WHEN j.decision IS NULL THEN 'missing field: decision'
            ELSE 'guard_decision' END AS label,
       coalesce(bad_excerpt, excerpt) AS excerpt
FROM sg;

CREATE OR REPLACE TEMP TABLE fmt_events AS
SELECT s.fid, s.line, s.line AS last_line, 0 AS part, 1 AS n_records,
       'stallscan-guard:' || coalesce(j.session, 'unknown') AS session_id,
       parse_ts(to_json(j.time)) AS ts, parse_ts(to_json(j.time)) AS ts_end, 'per_message' AS ts_quality,
       'system' AS role, 'guard_decision' AS kind, j.excerpt AS text,
       []::STRUCT(id VARCHAR, name VARCHAR, arguments VARCHAR)[] AS tool_calls, NULL::VARCHAR AS tool_call_id,
       NULL::VARCHAR AS finish_reason, NULL::VARCHAR AS initiator, NULL::VARCHAR AS message_id,
       NULL::VARCHAR AS record_id, NULL::VARCHAR AS parent_id, j.turn AS turn_id, NULL::VARCHAR AS model,
       coalesce(j.event = 'SubagentStop', false) AS is_sidechain, NULL::BIGINT AS tokens_in, NULL::BIGINT AS tokens_out,
       json_object('guard_log_version', j.stallscan_guard, 'harness', j.harness, 'event', j.event,
                   'session', j.session, 'verdict', j.verdict, 'signature', j.signature, 'stalls', j.stalls,
                   'bound', j.bound, 'decision', j.decision, 'reason', j.reason, 'mode', j.mode,
                   'latency_ms', j.latency_ms, 'stop_hook_active', j.stop_hook_active,
                   'after_tool_round', j.after_tool_round, 'reply_from', j.reply_from) AS meta
FROM sg s JOIN fmt_fates f USING (fid, line) WHERE f.fate = 'event';

CREATE OR REPLACE TEMP TABLE fmt_ctx AS
SELECT fid, NULL::VARCHAR AS ctx_session, NULL::VARCHAR AS ctx_model, NULL::VARCHAR AS ctx_turn FROM batch_files;
