-- The rule variants' decisions for the rows of sweep/sweep_input.sql, in the same order (same filter, same
-- ORDER BY): for each variant (marker, notif, both) the step that decided and whether it called the event human.
-- Inputs: turn_boundaries, turn_boundary_variants (stallscan.replay.boundary_variants), scope_sessions.
SELECT b.session_id,
       coalesce(v.marker_decided_by, '') AS marker_decided_by,
       coalesce(v.marker_decision = 'human', false) AS marker_decided_human,
       coalesce(v.notif_decided_by, '') AS notif_decided_by,
       coalesce(v.notif_decision = 'human', false) AS notif_decided_human,
       coalesce(v.both_decided_by, '') AS both_decided_by,
       coalesce(v.both_decision = 'human', false) AS both_decided_human
FROM turn_boundaries b
LEFT JOIN turn_boundary_variants v USING (event_id)
WHERE b.starts_request AND b.origin <> 'tool_result' AND b.session_id IN (SELECT session_id FROM scope_sessions)
ORDER BY b.session_id, b.seq;
