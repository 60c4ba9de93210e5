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
-- columns): the temp table tb_scan, one row per event in storage order, read beside events with POSITIONAL
-- JOIN (each row checks that its rowid is the one the scan fetched, as stall_ev does), then filtered to the
-- user / tool events: no join on the rowid (a hash join of every user / tool event with its scan row,
-- carrying every column, spilled at 10M events). The labels are joined on event_id; nothing is materialised on
-- the way.
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

-- The hash table of the labels' join is built on user_labels (its id and four small columns), not on the
-- events' side (twelve columns): the positional scan's row estimate is about 0, so the optimizer would build
-- on the events (at 10M generated events the INSERT 15-16 against 11-12 CPU s). Reset after the statement
-- (and by stallscan.store.sql.rollback when it fails), as queries/replay/stall_rounds.sql does.
SET disabled_optimizers = 'build_side_probe_side';

INSERT INTO turn_boundaries_narrow
SELECT e.session_id, e.seq, e.event_id, e.ts, e.prev_status, e.initiator, l.origin, e.source_format, e.role, e.kind,
       l.origin_rule, l.human_content, l.starts_request, e.prev_event_id, e.gap_raw_s, e.ts_quality,
       $threshold::DOUBLE AS threshold
FROM (SELECT e.event_id, e.session_id, e.seq, e.ts, e.ts_quality, e.role, e.kind, e.source_format, e.initiator,
             s.prev_status, s.prev_event_id, s.gap_raw_s
      FROM events e POSITIONAL JOIN tb_scan s
      WHERE CASE WHEN e.rowid = s.rid THEN true ELSE error('tb_scan is not aligned with events') END
        AND e.role IN ('user', 'tool')) e
JOIN user_labels l USING (event_id);   -- (no ORDER BY: readers order their own output, and an incremental replay appends anyway)

RESET disabled_optimizers;
