-- Replay the router's turn-boundary decision for every user-role event (and tool result).
-- Inputs: events, user_labels (stallscan.labels), tb_scan (a temp table, stallscan/replay/scan_bounds.py). Parameter: threshold
-- (seconds, DOUBLE).
-- Output: table turn_boundaries_narrow (the stored columns; the view turn_boundaries over it,
-- queries/replay/turn_boundaries_view.sql, computes the decisions). Decision order:
--   1. header:     an x-initiator value (user -> human, agent -> continuation)
--   2. first:      no earlier assistant reply in the session -> human (a fresh conversation)
--   3. completion: previous reply not final (empty / truncated / cancelled / failed / tool_calls) -> continuation
--   4. gap:        after a final reply, gap_s >= threshold -> human, else continuation
--      no_time:    after a final reply but no trustworthy gap (a ts_quality not per_message, a missing
--                  timestamp, or a negative gap from clock skew) -> human, decided by the rules that do
--                  not need time (a user message after a final reply opens a turn); counted separately.
-- Also the two simpler policies: gap-only (ignores completion reports; NULL when the log gives no gap)
-- and header-only (NULL when no header was logged).

-- The previous reply of each user-role event (the last assistant event of the session with a smaller seq),
-- its completion report and the gap come from stallscan/replay/scan_bounds.py (over scan_boundaries.sql's
-- columns): the temp table tb_scan, one row per user / tool event keyed by its rowid (rid). The events are
-- joined to it on the rowid with the scan's four narrow columns as the hash table's build side and the events
-- a parallel probe, so the write runs on every thread (a POSITIONAL JOIN with a table of every event, as
-- before, is a source of one thread: the whole INSERT ran on one). A user / tool event without a scan row
-- fails with error(...) (the LEFT JOIN keeps it), as the positional rowid check did. The labels are joined on
-- event_id; nothing is materialised on the way.
-- Only what the decisions are computed from is stored: the decided_by / decision / error columns of the
-- three policies, gap_s and is_human_turn are the view's (each stored low-cardinality VARCHAR column cost
-- about 0.07 CPU s per 850k rows to write; the 26-column table 1.7-2.4 CPU s against 0.8-0.9 for this one).
-- prev_status: the previous reply's completion report as a 1-based code into
-- ['truncated', 'cancelled', 'failed', 'tool_calls', 'empty', 'final'] (NULL: no reply before).
-- The table is declared first so that its two event-id columns are stored uncompressed: ids are unique, so
-- DuckDB's dictionary + FSST compression gains little on them and its analysis was the largest single cost of
-- writing the table (about 0.35 CPU s per column per 800k rows; docs/replay-scan.md, "Writing the tables").
CREATE OR REPLACE TABLE turn_boundaries_narrow (
    session_id VARCHAR, seq INTEGER, event_id VARCHAR USING COMPRESSION uncompressed,
    ts TIMESTAMP WITH TIME ZONE, prev_status TINYINT, initiator VARCHAR, origin VARCHAR, source_format VARCHAR,
    "role" VARCHAR, kind VARCHAR, origin_rule VARCHAR, human_content BOOLEAN, starts_request BOOLEAN,
    prev_event_id VARCHAR USING COMPRESSION uncompressed, gap_raw_s DOUBLE, ts_quality VARCHAR, threshold DOUBLE);

-- The hash tables are built on tb_scan (rid and three small columns) and user_labels (its id and four small
-- columns), the right sides, not on the events (twelve columns): DuckDB's estimates could put the events on
-- the build side (at 10M generated events that spilled). Reset after the statement (and by
-- stallscan.store.sql.rollback when it fails), as queries/replay/stall_rounds.sql does.
SET disabled_optimizers = 'build_side_probe_side';

INSERT INTO turn_boundaries_narrow
SELECT e.session_id, e.seq, e.event_id, e.ts, s.prev_status, e.initiator, l.origin, e.source_format, e.role, e.kind,
       l.origin_rule, l.human_content, l.starts_request, s.prev_event_id, s.gap_raw_s, e.ts_quality,
       $threshold::DOUBLE AS threshold
FROM events e
LEFT JOIN tb_scan s ON s.rid = e.rowid
JOIN user_labels l ON l.event_id = e.event_id
WHERE e.role IN ('user', 'tool')
  AND CASE WHEN s.rid IS NOT NULL THEN true ELSE error('tb_scan holds no row of a user / tool event') END;
-- (no ORDER BY: readers order their own output, and an incremental replay appends anyway)

RESET disabled_optimizers;
