-- The rule variants' decisions for the rows of sweep/sweep_input.sql, in the same order (same filter, same
-- ORDER BY): for each variant (marker, notif, both) the step that decided and whether it called the event human.
-- Inputs: turn_boundaries, turn_boundary_variants_marked (stallscan.replay.boundary_variants: the rows of the
-- view turn_boundary_variants a variant rule can change; any other row is decided as the router decided it),
-- scope_sessions.
SELECT b.session_id,
       coalesce(CASE WHEN m.event_id IS NULL THEN b.decided_by ELSE m.marker_decided_by END, '') AS marker_decided_by,
       coalesce(CASE WHEN m.event_id IS NULL THEN b.decision ELSE m.marker_decision END = 'human', false)
           AS marker_decided_human,
       coalesce(CASE WHEN m.event_id IS NULL THEN b.decided_by ELSE m.notif_decided_by END, '') AS notif_decided_by,
       coalesce(CASE WHEN m.event_id IS NULL THEN b.decision ELSE m.notif_decision END = 'human', false)
           AS notif_decided_human,
       coalesce(CASE WHEN m.event_id IS NULL THEN b.decided_by ELSE m.both_decided_by END, '') AS both_decided_by,
       coalesce(CASE WHEN m.event_id IS NULL THEN b.decision ELSE m.both_decision END = 'human', false)
           AS both_decided_human
FROM turn_boundaries b
LEFT JOIN turn_boundary_variants_marked m USING (event_id)
WHERE b.starts_request AND b.origin <> 'tool_result' AND b.session_id IN (SELECT session_id FROM scope_sessions)
ORDER BY b.session_id, b.seq;
