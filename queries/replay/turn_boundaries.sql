-- Replay the router's turn-boundary decision for every user-role event (and tool result).
-- Inputs: events, user_labels (stallscan.labels), tb_scan (stallscan/replay/scan_bounds.py). Parameter: threshold
-- (seconds, DOUBLE).
-- Output: table turn_boundaries. Decision order:
--   1. header:     an x-initiator value (user -> human, agent -> continuation)
--   2. first:      no earlier assistant reply in the session -> human (a fresh conversation)
--   3. completion: previous reply not final (empty / truncated / cancelled / failed / tool_calls) -> continuation
--   4. gap:        after a final reply, gap_s >= threshold -> human, else continuation
--      no_time:    after a final reply but no trustworthy gap (a ts_quality not per_message, a missing
--                  timestamp, or a negative gap from clock skew) -> human, decided by the rules that do
--                  not need time (a user message after a final reply opens a turn); counted separately.
-- Also the two simpler policies: gap-only (ignores completion reports; NULL when the log gives no gap)
-- and header-only (NULL when no header was logged).

-- decision vs truth: not_request (not judged), NULL (the policy could not decide), none, or the error kind
CREATE OR REPLACE TEMP MACRO boundary_error(starts_request, is_human, decision) AS CASE
    WHEN NOT starts_request THEN 'not_request'
    WHEN decision IS NULL THEN NULL
    WHEN is_human AND decision = 'continuation' THEN 'human_as_auto'
    WHEN NOT is_human AND decision = 'human' THEN 'auto_as_human'
    ELSE 'none' END;

-- The previous reply of each user-role event (the last assistant event of the session with a smaller seq),
-- its completion report and the gap come from stallscan/replay/scan_bounds.py (over scan_boundaries.sql's
-- columns): the Arrow table tb_scan, one row per user / tool event, joined to those events on rowid (a
-- POSITIONAL JOIN with the filtered scan of events was not safe: on a 945-file tree the filtered scan did
-- not come back in the scan's row order); labels are joined here, nothing is materialised on the way.
-- The table is declared first so that its two event-id columns are stored uncompressed: ids are unique, so
-- DuckDB's dictionary + FSST compression gains little on them and its analysis was the largest single cost of
-- writing the table (about 0.35 CPU s per column per 800k rows; docs/replay-scan.md, "Writing the tables").
CREATE OR REPLACE TABLE turn_boundaries (
    session_id VARCHAR, seq INTEGER, event_id VARCHAR USING COMPRESSION uncompressed,
    ts TIMESTAMP WITH TIME ZONE, gap_s DOUBLE, prev_reply_status VARCHAR, initiator VARCHAR, decided_by VARCHAR,
    decision VARCHAR, origin VARCHAR, is_human_turn BOOLEAN, "error" VARCHAR, gap_only_decision VARCHAR,
    gap_only_error VARCHAR, header_only_decision VARCHAR, header_only_error VARCHAR, source_format VARCHAR,
    "role" VARCHAR, kind VARCHAR, origin_rule VARCHAR, human_content BOOLEAN, starts_request BOOLEAN,
    prev_event_id VARCHAR USING COMPRESSION uncompressed, gap_raw_s DOUBLE, ts_quality VARCHAR, threshold DOUBLE);

INSERT INTO turn_boundaries
WITH tb_rows AS (
    SELECT e.event_id, e.session_id, e.seq, e.ts, e.ts_quality, e.role, e.kind, e.source_format, e.initiator,
           s.prev_event_id, s.prev_reply_status::VARCHAR AS prev_reply_status, s.gap_raw_s
    FROM (SELECT rowid AS rid, event_id, session_id, seq, ts, ts_quality, role, kind, source_format, initiator
          FROM events WHERE role IN ('user', 'tool')) e
    JOIN tb_scan s ON s.rid = e.rid
), d AS (
    SELECT t.*, l.origin, l.origin_rule, l.human_content, l.starts_request,
           l.origin = 'human' OR l.human_content AS is_human_turn,
           CASE WHEN t.gap_raw_s >= 0 THEN t.gap_raw_s END AS gap_s,
           CASE WHEN t.initiator IN ('user', 'agent') THEN 'header'
                WHEN t.prev_reply_status IS NULL THEN 'first'
                WHEN t.prev_reply_status <> 'final' THEN 'completion'
                WHEN t.gap_raw_s IS NULL OR t.gap_raw_s < 0 THEN 'no_time'
                ELSE 'gap' END AS decided_by
    FROM tb_rows t JOIN user_labels l USING (event_id)
), p AS (
    SELECT d.*,
           CASE decided_by WHEN 'header' THEN (CASE initiator WHEN 'user' THEN 'human' ELSE 'continuation' END)
                           WHEN 'first' THEN 'human'
                           WHEN 'completion' THEN 'continuation'
                           WHEN 'no_time' THEN 'human'
                           ELSE (CASE WHEN gap_s >= $threshold::DOUBLE THEN 'human' ELSE 'continuation' END) END AS decision,
           CASE WHEN prev_reply_status IS NULL THEN 'human'
                WHEN gap_s IS NOT NULL THEN (CASE WHEN gap_s >= $threshold::DOUBLE THEN 'human' ELSE 'continuation' END)
                END AS gap_only_decision,
           CASE initiator WHEN 'user' THEN 'human' WHEN 'agent' THEN 'continuation' END AS header_only_decision
    FROM d
)
SELECT session_id, seq, event_id, ts, gap_s, prev_reply_status, initiator, decided_by, decision, origin,
       is_human_turn,
       boundary_error(starts_request, is_human_turn, decision) AS error,
       gap_only_decision,
       boundary_error(starts_request, is_human_turn, gap_only_decision) AS gap_only_error,
       header_only_decision,
       boundary_error(starts_request, is_human_turn, header_only_decision) AS header_only_error,
       source_format, role, kind, origin_rule, human_content, starts_request, prev_event_id, gap_raw_s,
       ts_quality, $threshold::DOUBLE AS threshold
FROM p;   -- (no ORDER BY: readers order their own output, and an incremental replay appends anyway)

