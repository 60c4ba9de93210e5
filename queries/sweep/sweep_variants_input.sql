-- The rule variants' decisions for the rows of sweep/sweep_input.sql, in the same order (same filter, same
-- ORDER BY): for each variant (marker, notif, both) the step that decided and whether it called the event human.
-- Inputs: turn_boundaries (the view, or the table `report --from-parquet` was given: no narrow table then),
-- turn_boundary_variants_marked (stallscan.replay.boundary_variants: the rows of the view
-- turn_boundary_variants a variant rule can change; any other row is decided as the router decided it),
-- scope_sessions; the macros sweep_pick_step / sweep_pick_human (sweep_picks.sql).
SELECT b.session_id,
       sweep_pick_step(m.event_id IS NOT NULL, m.marker_decided_by, b.decided_by) AS marker_decided_by,
       sweep_pick_human(m.event_id IS NOT NULL, m.marker_decision, b.decision = 'human') AS marker_decided_human,
       sweep_pick_step(m.event_id IS NOT NULL, m.notif_decided_by, b.decided_by) AS notif_decided_by,
       sweep_pick_human(m.event_id IS NOT NULL, m.notif_decision, b.decision = 'human') AS notif_decided_human,
       sweep_pick_step(m.event_id IS NOT NULL, m.both_decided_by, b.decided_by) AS both_decided_by,
       sweep_pick_human(m.event_id IS NOT NULL, m.both_decision, b.decision = 'human') AS both_decided_human
FROM turn_boundaries_by_seq b
LEFT JOIN turn_boundary_variants_marked m USING (event_id)
WHERE b.starts_request AND b.origin <> 'tool_result' AND b.session_id IN (SELECT session_id FROM scope_sessions)
ORDER BY b.session_id, b.seq;
