-- The report's per-session summary of the turn-boundary replay (table boundary_cells, stallscan.report.summary_cells),
-- which the "Turn boundaries" section reads instead of turn_boundaries: one row per session and distinct
-- combination of what the section counts (harness, origin, rule, request or not, truth, each policy's
-- decision and error, the gap-histogram bin, the no_time reason), n = how many records share it.
--   hist_lo         the lower edge of the gap-histogram bin (report/boundaries_gap_histogram.sql holds the
--                   same edges) of a record that starts a request after a final reply with a trustworthy
--                   gap, else NULL;
--   no_time_reason  why a record decided by no_time had no trustworthy gap, else NULL.
-- Input: cells_boundary_rows() (report/cells_boundary_rows.sql: turn_boundaries_by_seq, turn_boundaries with the
-- previous reply's seq in its session, prev_seq, or the changed sessions' rows of it), events (the previous
-- reply's time, by session and seq); cells_changed (session_id: the sessions to summarise when not $all).
-- Parameter: $all (BOOLEAN: every session, for a full build).
WITH t AS (
    SELECT * FROM cells_boundary_rows() WHERE $all::BOOLEAN OR session_id IN (SELECT session_id FROM cells_changed)
)
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
FROM t
LEFT JOIN (SELECT session_id, seq, ts_end, ts_quality FROM events
           WHERE role = 'assistant' AND session_id IN (SELECT session_id FROM t WHERE decided_by = 'no_time')) p
       ON p.session_id = t.session_id AND p.seq = t.prev_seq AND t.decided_by = 'no_time'
GROUP BY ALL;
