-- One row per turn (our numbering: 0 = before the first human message, then one per human turn start):
-- span, rounds, tool calls, stalls, the delivered (last) round and the turn's outcome.
-- Input: stall_turn_span (per turn, from the scan: its span, replies and tool calls, and the rowids of its start, last
-- reply and last replies that name a model / a finish reason), events (those rows' session, harness, the last reply's seq, model and
-- finish), rounds_core (the last reply's round kind and provider: its row marked last_in_turn, bit 25 of its codes), stall_walk (the
-- rounds of turns with a stall, with outcomes and nudges: the stalls and nudged stalls are counted there, every
-- stall is in it; the delivered round found by its seq). No aggregate over every reply: the GROUP BY of rounds_core
-- with four string states was most of this statement (4.1 CPU s at 10M generated events).
-- The model is the turn's last reply's that names one, the finish its last logged one (arg_max over the replies,
-- which skipped NULLs): the last reply's own when it has one (model_rid / finish_rid = last_rid), else an earlier
-- reply's, read from `earlier`, the few rows where they differ (none in the generated data). One join of every turn
-- with its last reply and two with those few rows, not three with every turn's three rowids: at 10M generated events,
-- one thread, 2.43-2.53 -> 2.09-2.21 CPU s.
-- No event id is stored: the turn's start is its event at start_seq (turns 1 on; turn 0 has no start) and its
-- delivered reply the event at delivered_seq, both in the session (seq is unique in a session); the view `turns`
-- (queries/replay/stall_turns_view.sql) joins their ids back, and every reader that needs neither reads
-- turns_by_seq (stall_turns_by_seq_view.sql). The two ids, fetched from the events and stored uncompressed, were a
-- fifth of this statement: at 10M generated events, one thread, 2.10-2.56 -> 1.72-1.88 CPU s
-- (docs/replay-scan.md, "stall22").
CREATE OR REPLACE TABLE turns_core (
    session_id VARCHAR, turn_id INTEGER, model VARCHAR, start_seq INTEGER, end_seq INTEGER,
    ts_start TIMESTAMP WITH TIME ZONE, ts_end TIMESTAMP WITH TIME ZONE, n_rounds INTEGER, n_tool_calls INTEGER,
    n_stalls INTEGER, n_nudged INTEGER, delivered_seq INTEGER, codes BIGINT, uncoded VARCHAR
);

INSERT INTO turns_core
WITH ev AS (    -- the turn's session and harness from its start row (turn 0: its first row), by rowid
    SELECT e.session_id, t.turn_id::INTEGER AS turn_id, e.source_format, t.start_seq, t.end_seq, t.ts_start, t.ts_end,
           t.n_rounds, t.n_tool_calls, t.last_rid, t.model_rid, t.finish_rid
    FROM events e JOIN stall_turn_span t ON e.rowid = t.first_rid
), ids AS (     -- the turns' last replies, by rowid
    SELECT e.rowid AS rid, e.seq, e.model, e.finish_reason
    FROM events e SEMI JOIN stall_turn_span k ON e.rowid = k.last_rid
), earlier AS ( -- the turns' last replies that name a model / a finish reason where the last reply does not
    SELECT e.rowid AS rid, e.model, e.finish_reason
    FROM events e
    SEMI JOIN (SELECT model_rid AS rid FROM stall_turn_span WHERE model_rid <> last_rid
               UNION ALL SELECT finish_rid FROM stall_turn_span WHERE finish_rid <> last_rid) k ON e.rowid = k.rid
), last AS (    -- the turn's last reply's row of rounds_core
    -- (its round kind and provider codes, queries/replay/stall_rounds.sql: the same lists as here; the strings
    -- only where the reply has no code)
    SELECT session_id, turn_id, seq AS delivered_seq, (codes & 255)::UTINYINT AS c_round_kind,
           ((codes >> 16) & 255)::UTINYINT AS c_provider,
           CASE WHEN codes & 255 = 0 THEN uncoded ->> 'round_kind' END AS round_kind,
           CASE WHEN (codes >> 16) & 255 = 0 THEN uncoded ->> 'provider' END AS provider
    FROM rounds_core WHERE (codes >> 25) & 1 = 1  -- (last_in_turn)
), walked AS (  -- the stalls (every stall is in stall_walk) and the nudged ones
    SELECT session_id, turn_id, count(*) FILTER (WHERE is_stall) AS n_stalls,
           count(*) FILTER (WHERE is_stall AND nudge_id IS NOT NULL) AS n_nudged
    FROM stall_walk GROUP BY ALL
)
SELECT session_id, turn_id, model, start_seq, end_seq, ts_start, ts_end, n_rounds, n_tool_calls,
       n_stalls, n_nudged, delivered_seq,
       coalesce(c_source_format, 0)::BIGINT | (coalesce(c_provider, 0)::BIGINT << 8)
           | (coalesce(c_round_kind, 0)::BIGINT << 16) | (coalesce(c_finish, 0)::BIGINT << 24)
           | (coalesce(c_outcome, 0)::BIGINT << 32) AS codes,
       -- (the values no list holds, on the rare row that has one; NULL on every other row)
       CASE WHEN (c_source_format IS NULL AND source_format IS NOT NULL) OR (c_provider IS NULL AND provider IS NOT NULL)
                 OR (c_round_kind IS NULL AND round_kind IS NOT NULL)
                 OR (c_finish IS NULL AND delivered_finish IS NOT NULL) OR (c_outcome IS NULL AND outcome IS NOT NULL)
            THEN json_object('source_format', CASE WHEN c_source_format IS NULL THEN source_format END,
                             'provider', CASE WHEN c_provider IS NULL THEN provider END,
                             'delivered_round_kind', CASE WHEN c_round_kind IS NULL THEN round_kind END,
                             'delivered_finish', CASE WHEN c_finish IS NULL THEN delivered_finish END,
                             'outcome', CASE WHEN c_outcome IS NULL THEN outcome END)::VARCHAR END AS uncoded
FROM (
SELECT ev.session_id, ev.turn_id, ev.source_format, coalesce(lr.model, lm.model) AS model,
       list_position(['claude_code', 'codex', 'openai_chat', 'cline_api', 'cline_ui', 'gemini_cli', 'gemini_cli_json',
                      'gemini_cli_history', 'copilot_cli', 'openhands', 'swe_agent', 'hermes_traj', 'aider',
                      'aider_input', 'opencode', 'opencode_run', 'stallscan_guard', 'otlp', 'otlp_doc',
                      'phoenix_spans', 'litellm'], ev.source_format)::UTINYINT AS c_source_format,
       -- (no reply: 'unknown', code 1)
       CASE WHEN k.c_provider IS NULL THEN 1 WHEN k.c_provider > 0 THEN k.c_provider END AS c_provider,
       coalesce(k.provider, 'unknown') AS provider,
       ev.start_seq, ev.end_seq, ev.ts_start, ev.ts_end, ev.n_rounds, ev.n_tool_calls,
       coalesce(w.n_stalls, 0)::INTEGER AS n_stalls, coalesce(w.n_nudged, 0)::INTEGER AS n_nudged,
       lr.seq AS delivered_seq, nullif(k.c_round_kind, 0) AS c_round_kind, k.round_kind,
       coalesce(lr.finish_reason, lf.finish_reason) AS delivered_finish,
       list_position(['stop', 'tool_calls', 'length', 'end_turn', 'tool_use', 'max_tokens', 'stop_sequence',
                      'content_filter', 'STOP', 'MAX_TOKENS'], coalesce(lr.finish_reason, lf.finish_reason))::UTINYINT
           AS c_finish,
       -- (the outcome's code into ['answered', 'open', 'no_reply', 'silent_plan_as_answer', 'exhausted', 'abandoned',
       -- 'recovered', 'empty', 'truncated', 'cancelled', 'failed'], the list the view decodes with)
       CASE WHEN ev.n_rounds = 0 THEN 'no_reply'
            WHEN d.outcome IS NOT NULL THEN d.outcome
            WHEN k.c_round_kind = 2 THEN 'answered'
            WHEN k.c_round_kind = 1 THEN 'open'
            ELSE coalesce(['tool_round', 'final', 'dropped_tool_call', 'no_tool', 'narrated_intent', 'empty',
                           'truncated', 'cancelled', 'failed'][nullif(k.c_round_kind, 0)], k.round_kind) END AS outcome,
       CASE WHEN ev.n_rounds = 0 THEN 3
            WHEN d.outcome IS NOT NULL
                THEN list_position(['answered', 'open', 'no_reply', 'silent_plan_as_answer', 'exhausted', 'abandoned',
                                    'recovered', 'empty', 'truncated', 'cancelled', 'failed'], d.outcome)
            WHEN k.c_round_kind = 2 THEN 1
            WHEN k.c_round_kind = 1 THEN 2
            WHEN k.c_round_kind BETWEEN 6 AND 9 THEN k.c_round_kind + 2 END::UTINYINT AS c_outcome
FROM ev
LEFT JOIN last k USING (session_id, turn_id)
LEFT JOIN walked w USING (session_id, turn_id)
LEFT JOIN stall_walk d ON d.session_id = k.session_id AND d.seq = k.delivered_seq
LEFT JOIN ids lr ON lr.rid = ev.last_rid
LEFT JOIN earlier lm ON lm.rid = ev.model_rid
LEFT JOIN earlier lf ON lf.rid = ev.finish_rid
WHERE ev.turn_id > 0 OR ev.n_rounds > 0
);
