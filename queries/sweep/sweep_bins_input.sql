-- Rows the stored sweep cells (table sweep_bins, stallscan.sweep.bins) are binned from: sweep/sweep_input.sql's
-- rows and sweep/sweep_variants_input.sql's columns for every session (no report scope: the scope is applied
-- when the cells are read), with the event's source_format and the session's last model for grouping.
-- Inputs: turn_boundaries, turn_boundary_variants_marked, events (resolved through the search path, so the same
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
       coalesce(CASE WHEN v.event_id IS NULL THEN b.decided_by ELSE v.marker_decided_by END, '') AS marker_decided_by,
       coalesce(CASE WHEN v.event_id IS NULL THEN b.decision ELSE v.marker_decision END = 'human', false)
           AS marker_decided_human,
       coalesce(CASE WHEN v.event_id IS NULL THEN b.decided_by ELSE v.notif_decided_by END, '') AS notif_decided_by,
       coalesce(CASE WHEN v.event_id IS NULL THEN b.decision ELSE v.notif_decision END = 'human', false)
           AS notif_decided_human,
       coalesce(CASE WHEN v.event_id IS NULL THEN b.decided_by ELSE v.both_decided_by END, '') AS both_decided_by,
       coalesce(CASE WHEN v.event_id IS NULL THEN b.decision ELSE v.both_decision END = 'human', false)
           AS both_decided_human
FROM turn_boundaries b
-- (the variants' stored rows, as sweep_variants_input.sql reads them: any other row is decided as the router
-- decided it; the view turn_boundary_variants would compute the router's decisions a second time and join
-- every row on event_id)
LEFT JOIN turn_boundary_variants_marked v USING (event_id)
LEFT JOIN (SELECT session_id, arg_max(model, seq) FILTER (WHERE model IS NOT NULL) AS model
           FROM events GROUP BY session_id) m ON m.session_id = b.session_id
WHERE b.starts_request AND b.origin <> 'tool_result';
