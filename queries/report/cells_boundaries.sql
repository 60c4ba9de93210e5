-- The report's per-session summary of the turn-boundary replay (stallscan.report.cells), which the
-- "Turn boundaries" section reads instead of turn_boundaries:
--   boundary_cells     one row per session and distinct combination of what the section counts (harness,
--                      origin, rule, request or not, truth, each policy's decision and error, the gap
--                      histogram bin, the no_time reason) with n = how many records share it;
--   boundary_misreads  the router's errors themselves (auto_as_human / human_as_auto), for the worst-first list.
-- hist_lo: the lower edge of the gap-histogram bin (report/boundaries_gap_histogram.sql holds the same edges)
-- of a record that starts a request after a final reply with a trustworthy gap, else NULL.
-- no_time_reason: why a record decided by no_time had no trustworthy gap, else NULL.
-- Inputs: turn_boundaries, events (the previous reply's time), resolved through the search path (the
-- scratch schema of an incremental run holds only the changed sessions: stallscan.replay.derive).
CREATE OR REPLACE TABLE boundary_cells AS
SELECT t.session_id, t.source_format, t.origin, t.origin_rule, t.starts_request, t.human_content,
       t.is_human_turn, t.decided_by, t.decision, t.error, t.gap_only_decision, t.gap_only_error,
       t.header_only_decision, t.header_only_error,
       CASE WHEN t.starts_request AND t.prev_reply_status = 'final' AND t.gap_s IS NOT NULL
            THEN list_last(list_filter([0.0, 0.25, 0.5, 1, 1.5, 2, 3, 5, 8, 13, 21, 30, 60, 300, 3600]::DOUBLE[],
                                       lambda x: x <= t.gap_s)) END AS hist_lo,
       CASE WHEN t.decided_by <> 'no_time' THEN NULL
            WHEN t.gap_raw_s < 0 THEN 'negative gap (clock skew)'
            WHEN t.ts IS NULL OR p.ts_end IS NULL THEN 'missing timestamp'
            WHEN t.ts_quality <> 'per_message' OR p.ts_quality <> 'per_message'
                 THEN 'timestamps ' || (CASE WHEN t.ts_quality <> 'per_message' THEN t.ts_quality ELSE p.ts_quality END)
            ELSE 'other' END AS no_time_reason,
       count(*) AS n
FROM turn_boundaries t
LEFT JOIN (SELECT event_id, ts_end, ts_quality FROM events WHERE role = 'assistant') p
       ON p.event_id = t.prev_event_id AND t.decided_by = 'no_time'
GROUP BY ALL;

CREATE OR REPLACE TABLE boundary_misreads AS
SELECT event_id, session_id, seq, ts, gap_s, prev_reply_status, decided_by, decision, origin, origin_rule, error,
       source_format, threshold
FROM turn_boundaries
WHERE error IN ('auto_as_human', 'human_as_auto');
