-- Rows the stored sweep cells (table sweep_bins, stallscan.sweep.bins) are binned from: sweep/sweep_input.sql's
-- rows and sweep/sweep_variants_input.sql's columns for every session (no report scope: the scope is applied
-- when the cells are read), with the event's source_format and the session's last model for grouping.
-- Inputs: turn_boundaries, turn_boundary_variants, events (resolved through the search path, so the same
-- statement runs on a scratch schema holding only the changed sessions).
SELECT b.session_id,
       b.source_format,
       m.model,
       coalesce(b.is_human_turn, false) AS human,
       coalesce(b.decided_by, '') AS decided_by,
       coalesce(b.decision = 'human', false) AS decided_human,
       coalesce(b.gap_s, 'NaN'::DOUBLE) AS gap_s,
       b.prev_reply_status IS NULL AS first_in_session,
       coalesce(b.origin_rule, '') IN ('default_human', '') AS by_fallback,
       coalesce(v.marker_decided_by, '') AS marker_decided_by,
       coalesce(v.marker_decision = 'human', false) AS marker_decided_human,
       coalesce(v.notif_decided_by, '') AS notif_decided_by,
       coalesce(v.notif_decision = 'human', false) AS notif_decided_human,
       coalesce(v.both_decided_by, '') AS both_decided_by,
       coalesce(v.both_decision = 'human', false) AS both_decided_human
FROM turn_boundaries b
LEFT JOIN turn_boundary_variants v USING (event_id)
LEFT JOIN (SELECT session_id, arg_max(model, seq) FILTER (WHERE model IS NOT NULL) AS model
           FROM events GROUP BY session_id) m ON m.session_id = b.session_id
WHERE b.starts_request AND b.origin <> 'tool_result';
