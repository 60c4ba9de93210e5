-- One row per turn (our numbering: 0 = before the first human message, then one per human turn start):
-- span, rounds, tool calls, stalls, the delivered (last) round and the turn's outcome.
-- Input: stall_turn_span (per turn, from the scan: its span and the rowids of its start and last reply),
-- events (those rows' session, harness and event ids), rounds_core, stall_walk (the
-- rounds of turns with a stall, with outcomes and nudges: the nudged stalls are counted there, every stall is in it). The delivered round is the turn's last (highest seq: unique
-- inside a session), found in stall_walk by its seq.
-- The two event ids are stored uncompressed: a different 32-character id on every row gains little from DuckDB's
-- dictionary / FSST compression, whose analysis cost about six times the plain write (at 2M generated events
-- 0.17-0.20 against 0.03 CPU s a column, 250,048 turns).
CREATE OR REPLACE TABLE turns (
    session_id VARCHAR, turn_id INTEGER, source_format VARCHAR, model VARCHAR, provider VARCHAR,
    start_event_id VARCHAR USING COMPRESSION uncompressed, start_seq INTEGER, end_seq INTEGER,
    ts_start TIMESTAMP WITH TIME ZONE, ts_end TIMESTAMP WITH TIME ZONE, n_rounds INTEGER, n_tool_calls INTEGER,
    n_stalls INTEGER, n_nudged INTEGER, delivered_event_id VARCHAR USING COMPRESSION uncompressed,
    delivered_round_kind VARCHAR, delivered_finish VARCHAR, outcome VARCHAR
);

INSERT INTO turns
WITH ev AS (    -- the turn's session, harness and start's id from its start row (turn 0: its first row), by rowid
    SELECT e.session_id, t.turn_id::INTEGER AS turn_id, e.source_format,
           CASE WHEN t.started THEN e.event_id END AS start_event_id, t.start_seq, t.end_seq, t.ts_start, t.ts_end,
           t.last_rid
    FROM events e JOIN stall_turn_span t ON e.rowid = t.first_rid
), lr AS (      -- the id of each turn's last reply, by rowid
    SELECT e.rowid AS last_rid, e.event_id AS last_reply_id FROM events e JOIN stall_turn_span t ON e.rowid = t.last_rid
), rd AS (
    SELECT r.*, w.outcome AS delivered_outcome
    FROM (SELECT session_id, turn_id,
                 count(*) AS n_rounds,
                 sum(n_tool_calls) AS n_tool_calls,
                 count(*) FILTER (WHERE round_kind IN ('dropped_tool_call', 'no_tool', 'narrated_intent')) AS n_stalls,
                 arg_max(model, seq) FILTER (WHERE model IS NOT NULL) AS model,
                 arg_max(provider, seq) AS provider,
                 max(seq) AS delivered_seq,
                 arg_max(round_kind, seq) AS delivered_round_kind,
                 arg_max(finish_reason, seq) AS delivered_finish
          FROM rounds_core GROUP BY ALL) r
    LEFT JOIN stall_walk w ON w.session_id = r.session_id AND w.seq = r.delivered_seq
), nudged AS (
    SELECT session_id, turn_id, count(*) AS n_nudged FROM stall_walk WHERE is_stall AND nudge_id IS NOT NULL GROUP BY ALL
)
SELECT ev.session_id, ev.turn_id, ev.source_format, rd.model, coalesce(rd.provider, 'unknown') AS provider,
       ev.start_event_id, ev.start_seq, ev.end_seq, ev.ts_start, ev.ts_end,
       coalesce(rd.n_rounds, 0)::INTEGER AS n_rounds, coalesce(rd.n_tool_calls, 0)::INTEGER AS n_tool_calls,
       coalesce(rd.n_stalls, 0)::INTEGER AS n_stalls, coalesce(nudged.n_nudged, 0)::INTEGER AS n_nudged,
       lr.last_reply_id AS delivered_event_id, rd.delivered_round_kind, rd.delivered_finish,
       CASE WHEN rd.n_rounds IS NULL THEN 'no_reply'
            WHEN rd.delivered_outcome IS NOT NULL THEN rd.delivered_outcome
            WHEN rd.delivered_round_kind = 'final' THEN 'answered'
            WHEN rd.delivered_round_kind = 'tool_round' THEN 'open'
            ELSE rd.delivered_round_kind END AS outcome
FROM ev LEFT JOIN rd USING (session_id, turn_id) LEFT JOIN nudged USING (session_id, turn_id) LEFT JOIN lr USING (last_rid)
WHERE ev.turn_id > 0 OR rd.n_rounds > 0;
